/** Styles for `<skald-change-password>`. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
  }

  h3 {
    margin: 0 0 var(--skald-space-2);
    font-size: 1.1rem;
  }

  .error-text {
    color: var(--skald-error);
  }

  skald-password-hint {
    display: block;
    margin-bottom: var(--skald-space-3);
  }
`;
