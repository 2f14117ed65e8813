/** Styles for `<skald-my-data>`. */
import { css } from 'lit';

export const styles = css`
  .contents {
    margin: 0 0 var(--skald-space-2);
    padding-left: 1.25rem;
  }

  .danger-zone {
    border-color: var(--skald-error);
  }

  .danger-zone h3 {
    color: var(--skald-error);
  }

  /* A language name is short: the menu need not span the column. */
  #language {
    max-width: 20rem;
  }

  .small {
    margin: 0 0 var(--skald-space-2);
  }
`;
