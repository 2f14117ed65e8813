/** Styles for `<skald-admin-roles>`. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
  }

  .role-list {
    list-style: none;
    margin: 0;
    padding: 0;
  }

  .row-head h3 {
    margin: 0;
    font-size: 1.1rem;
  }

  p.small {
    margin: var(--skald-space-1) 0 0;
  }

  .role-form {
    margin-top: var(--skald-space-3);
    padding-top: var(--skald-space-3);
    border-top: 1px solid var(--skald-border);
  }

  fieldset {
    margin: 0 0 var(--skald-space-3);
    padding: var(--skald-space-2) var(--skald-space-3);
    border: 1px solid var(--skald-border);
    border-radius: var(--skald-radius);
  }

  legend {
    font-weight: 600;
    padding: 0 var(--skald-space-1);
  }

  /* A flag with its explanation under its label. */
  .check .hint {
    display: block;
    margin: 0;
  }

  .add {
    display: grid;
    grid-template-columns: repeat(auto-fit, minmax(min(100%, 12rem), 1fr));
    gap: 0 var(--skald-space-3);
    align-items: start;
  }

  .submit {
    padding-top: 1.75rem;
  }

  .danger-text {
    color: var(--skald-error);
  }
`;
