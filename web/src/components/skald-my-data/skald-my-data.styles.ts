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

  .small {
    margin: 0 0 var(--skald-space-2);
  }
`;
