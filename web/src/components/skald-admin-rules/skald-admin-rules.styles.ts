/** Styles for `<skald-admin-rules>`. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
  }

  .how {
    margin: 0 0 var(--skald-space-3);
    padding-left: 1.25rem;
    color: var(--skald-text-muted);
  }

  .rule {
    display: flex;
    align-items: center;
    gap: var(--skald-space-2);
  }

  .priority {
    flex: none;
    min-width: 3.5rem;
    font-weight: 700;
    color: var(--skald-text-muted);
  }

  .what {
    flex: 1;
    min-width: 0;
    display: flex;
    flex-direction: column;
    overflow-wrap: anywhere;
  }

  .tools {
    display: flex;
    flex: none;
  }

  .icon {
    min-width: 2.5rem;
    padding: 0;
  }

  .danger-text {
    color: var(--skald-error);
  }

  @media (max-width: 30rem) {
    .rule {
      flex-wrap: wrap;
    }

    .what {
      flex-basis: calc(100% - 4.5rem);
    }

    .tools {
      margin-left: auto;
    }
  }
`;
