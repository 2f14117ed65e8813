/** Styles for `<skald-confirm>`. */
import { css } from 'lit';

export const styles = css`
  dialog {
    width: min(28rem, calc(100vw - 2rem));
    max-height: calc(100vh - 2rem);
    overflow: auto;
    padding: var(--skald-space-3);
    border: 1px solid var(--skald-border);
    border-radius: calc(var(--skald-radius) * 2);
    background: var(--skald-surface);
    color: var(--skald-text);
    box-shadow: var(--skald-shadow);
  }

  dialog::backdrop {
    background: rgba(0, 0, 0, 0.45);
  }

  h2 {
    margin: 0 0 var(--skald-space-2);
    font-size: 1.15rem;
  }

  p {
    margin: 0 0 var(--skald-space-3);
    overflow-wrap: anywhere;
  }

  .end {
    justify-content: flex-end;
  }
`;
