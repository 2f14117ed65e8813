/** Styles for `<skald-message-edit>`. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
    width: min(100%, 40rem);
  }

  .edit {
    display: flex;
    flex-direction: column;
    gap: var(--skald-space-2);
    padding: var(--skald-space-2);
    border: 1px solid var(--skald-focus);
    border-radius: calc(var(--skald-radius) * 2);
    background: var(--skald-surface);
  }

  textarea {
    min-height: 3rem;
    max-height: 20rem;
    resize: vertical;
    line-height: 1.5;
  }

  .hint {
    margin: 0;
    font-size: 0.85rem;
    color: var(--skald-text-muted);
  }

  .actions {
    display: flex;
    justify-content: flex-end;
    gap: var(--skald-space-2);
  }
`;
