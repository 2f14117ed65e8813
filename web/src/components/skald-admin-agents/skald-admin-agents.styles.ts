/** Styles for `<skald-admin-agents>`. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
  }

  .agent-list {
    list-style: none;
    margin: 0;
    padding: 0;
  }

  .row-head h3 {
    margin: 0;
    font-size: 1.1rem;
  }

  p.small {
    margin: var(--skald-space-1) 0 var(--skald-space-2);
  }

  .problems {
    border-left: 0.3rem solid var(--skald-error);
  }

  .editor {
    margin-top: var(--skald-space-3);
    padding-top: var(--skald-space-3);
    border-top: 1px solid var(--skald-border);
  }

  #agent-meta {
    font-family: var(--skald-font-mono);
    font-size: 0.9rem;
  }
`;
