/** Styles for `<skald-notes>`: the list beside the open note; one at a time when narrow. */
import { css } from 'lit';

export const styles = css`
  .split {
    flex: 1;
    min-height: 0;
    display: grid;
    grid-template-columns: minmax(15rem, 22rem) 1fr;
  }

  .list-pane {
    display: flex;
    flex-direction: column;
    min-height: 0;
    overflow-y: auto;
    padding: var(--skald-space-2);
    border-right: 1px solid var(--skald-border);
    background: var(--skald-bg);
  }

  .note-pane {
    min-width: 0;
    min-height: 0;
    overflow-y: auto;
    padding: var(--skald-space-3);
  }

  .search {
    margin-bottom: var(--skald-space-2);
  }

  .pad {
    padding: var(--skald-space-2);
  }

  .pad p {
    margin: 0 0 var(--skald-space-1);
  }

  .items {
    list-style: none;
    margin: 0;
    padding: 0;
  }

  .item {
    width: 100%;
    flex-direction: column;
    align-items: flex-start;
    gap: 0.15rem;
    padding: var(--skald-space-2);
    border-color: transparent;
    background: transparent;
    text-align: left;
    font-weight: 400;
  }

  .item[aria-current='true'] {
    background: var(--skald-selected);
  }

  .item-title {
    font-weight: 600;
    overflow-wrap: anywhere;
  }

  .item-meta,
  .item-snippet {
    font-size: 0.85rem;
    color: var(--skald-text-muted);
    overflow-wrap: anywhere;
  }

  mark {
    background: var(--skald-warn-bg);
    color: var(--skald-text);
    font-weight: 600;
  }

  @media (max-width: 60rem) {
    .split {
      grid-template-columns: 1fr;
    }

    .list-pane {
      border-right: none;
    }

    .split[data-showing='note'] .list-pane,
    .split[data-showing='list'] .note-pane {
      display: none;
    }
  }
`;
