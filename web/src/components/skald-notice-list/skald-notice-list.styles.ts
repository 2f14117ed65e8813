/** Styles for `<skald-notice-list>`. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
  }

  .notices {
    border-left: 0.3rem solid var(--skald-accent);
  }

  .row-head h3 {
    margin: 0;
    font-size: 1.1rem;
  }

  .sentence {
    margin: 0 0 var(--skald-space-1);
  }

  li p.small {
    margin: 0;
  }

  a {
    color: var(--skald-accent);
  }
`;
