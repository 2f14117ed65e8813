/** Styles for `<skald-held-changes>`. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
  }

  .held {
    border-left: 0.3rem solid var(--skald-warn);
    border-radius: var(--skald-radius);
    padding: var(--skald-space-2) var(--skald-space-3);
    margin-bottom: var(--skald-space-2);
    background: var(--skald-warn-bg);
    color: var(--skald-text);
    max-height: 40vh;
    overflow-y: auto;
  }

  h3 {
    margin: 0 0 var(--skald-space-1);
    font-size: 1rem;
  }

  ul {
    list-style: none;
    margin: 0;
    padding: 0;
  }

  li + li {
    border-top: 1px solid var(--skald-border);
    padding-top: var(--skald-space-2);
  }

  .sentence {
    margin: var(--skald-space-1) 0;
    overflow-wrap: anywhere;
  }

  .actions {
    display: flex;
    flex-wrap: wrap;
    gap: var(--skald-space-2);
    margin-bottom: var(--skald-space-2);
  }
`;
