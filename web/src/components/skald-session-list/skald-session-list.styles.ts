/** Styles for `<skald-session-list>`. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: flex;
    flex-direction: column;
    min-height: 0;
    gap: var(--skald-space-2);
  }

  /* New chat, and under it the quieter temporary one. */
  .new-row {
    display: grid;
    gap: var(--skald-space-1);
  }

  .new,
  .new-temporary {
    justify-content: flex-start;
  }

  .new-temporary {
    min-height: 2.25rem;
    border-color: transparent;
    background: transparent;
    font-weight: 400;
    color: var(--skald-text-muted);
  }

  .search input {
    min-height: 2.25rem;
  }

  nav {
    flex: 1;
    min-height: 0;
    overflow-y: auto;
    margin: 0 calc(-1 * var(--skald-space-1));
    padding: 0 var(--skald-space-1);
  }

  /* A short window (200% zoom): the whole navigation scrolls as one, so the list shows
     as many conversations as fit rather than one row above the fixed links. */
  @media (max-height: 36rem) {
    nav {
      flex: none;
      overflow: visible;
    }
  }

  ul {
    list-style: none;
    margin: 0;
    padding: 0;
  }

  .period {
    margin: var(--skald-space-2) var(--skald-space-2) var(--skald-space-1);
    font-size: 0.75rem;
    font-weight: 600;
    letter-spacing: 0.03em;
    text-transform: uppercase;
    color: var(--skald-text-muted);
  }

  .period:first-child {
    margin-top: 0;
  }

  .pad {
    padding: var(--skald-space-2);
  }

  .row {
    position: relative;
    display: flex;
    align-items: center;
    border-radius: var(--skald-radius);
  }

  .row:hover,
  .row:focus-within {
    background: var(--skald-hover);
  }

  .row[data-current='true'] {
    background: var(--skald-selected);
  }

  .open {
    flex: 1;
    min-width: 0;
    min-height: 2.5rem;
    justify-content: flex-start;
    flex-direction: column;
    align-items: flex-start;
    gap: 0;
    padding: 0.35rem 0.5rem;
    border: none;
    background: transparent;
    font-weight: 400;
    text-align: left;
  }

  .open:hover:not(:disabled) {
    background: transparent;
  }

  .row-title {
    display: block;
    width: 100%;
    overflow: hidden;
    text-overflow: ellipsis;
    white-space: nowrap;
  }

  /* Two lines of the matching words under the conversation's title. */
  .hit-snippet {
    display: -webkit-box;
    -webkit-line-clamp: 2;
    -webkit-box-orient: vertical;
    overflow: hidden;
    font-size: 0.8rem;
    color: var(--skald-text-muted);
  }

  .hit-snippet mark {
    background: var(--skald-warn-bg);
    color: var(--skald-text);
    font-weight: 600;
  }

  .state {
    font-size: 0.75rem;
    color: var(--skald-text-muted);
  }

  .state[data-state='parked'] {
    color: var(--skald-warn);
    font-weight: 600;
  }

  /* Out of the way until wanted, so every other title has the row's whole width. */
  .row-tools {
    display: none;
  }

  .row:hover .row-tools,
  .row:focus-within .row-tools,
  .row[data-current='true'] .row-tools {
    display: flex;
  }

  .icon {
    min-height: 2rem;
    min-width: 2rem;
    padding: 0;
    font-size: 0.9rem;
  }

  .rename {
    flex: 1;
    padding: 0.2rem;
  }

  .rename input {
    min-height: 2.25rem;
  }

  dialog {
    border: 1px solid var(--skald-border);
    border-radius: calc(var(--skald-radius) * 2);
    background: var(--skald-surface);
    color: var(--skald-text);
    box-shadow: var(--skald-shadow);
    padding: var(--skald-space-3);
    max-width: min(28rem, 90vw);
  }

  dialog::backdrop {
    background: rgba(0, 0, 0, 0.4);
  }

  dialog h2 {
    margin: 0 0 var(--skald-space-2);
    font-size: 1.15rem;
  }

  .end {
    justify-content: flex-end;
  }
`;
