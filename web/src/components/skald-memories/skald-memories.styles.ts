/**
 * Styles for `<skald-memories>`: the add form, the filters in a row, one memory a row,
 * the one opened from a reply marked.
 */
import { css } from 'lit';

export const styles = css`
  .filters {
    display: grid;
    grid-template-columns: minmax(min(100%, 14rem), 2fr) repeat(auto-fit, minmax(min(100%, 11rem), 1fr));
    gap: 0 var(--skald-space-3);
  }

  .erase-about {
    margin-bottom: var(--skald-space-3);
  }

  .none p {
    margin: 0 0 var(--skald-space-1);
  }

  .text {
    margin: 0 0 var(--skald-space-1);
    font-weight: 600;
    overflow-wrap: anywhere;
  }

  .facts {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    gap: var(--skald-space-1) var(--skald-space-3);
    margin: 0 0 var(--skald-space-1);
    color: var(--skald-text-muted);
  }

  .facts button.link {
    font-size: inherit;
  }

  .edit {
    display: flex;
    flex-wrap: wrap;
    gap: var(--skald-space-2);
    margin-bottom: var(--skald-space-1);
  }

  .edit input {
    flex: 1 1 16rem;
    min-width: 0;
  }

  a {
    color: var(--skald-accent);
  }

  /* The memory a reply's "used memories" link opened. */
  li[data-focused] {
    margin: 0 calc(-1 * var(--skald-space-2));
    padding-left: var(--skald-space-2);
    padding-right: var(--skald-space-2);
    border-radius: var(--skald-radius);
    background: var(--skald-accent-bg);
    box-shadow: inset 0.25rem 0 0 var(--skald-accent);
  }

  li[data-focused]:focus {
    outline: none;
  }

  li[data-focused]:focus-visible {
    outline: 0.2rem solid var(--skald-focus);
  }

  .tools {
    gap: var(--skald-space-1);
  }

  .tools button {
    color: var(--skald-text-muted);
  }

  .tools button.pinned {
    color: var(--skald-accent);
  }

  .tools button.erase:hover:not(:disabled) {
    color: var(--skald-error);
  }
`;
