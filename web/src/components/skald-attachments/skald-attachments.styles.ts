/**
 * Styles for `<skald-attachments>`, slotted into the composer's wrapping row (its host
 * takes no box of its own): the files as chips on a line of their own above the field, the
 * paperclip beside the field.
 */
import { css } from 'lit';

export const styles = css`
  :host {
    display: contents;
  }

  .attach {
    flex: none;
    align-self: flex-end;
    min-height: 2.5rem;
    min-width: 2.5rem;
    color: var(--skald-text-muted);
  }

  .chips,
  .note {
    flex: 1 0 100%;
  }

  .chips {
    display: flex;
    flex-wrap: wrap;
    gap: var(--skald-space-2);
    margin: 0;
    padding: 0;
    list-style: none;
    min-width: 0;
  }

  .chip {
    display: inline-flex;
    align-items: center;
    gap: var(--skald-space-2);
    max-width: 100%;
    min-width: 0;
    padding: 0 0 0 0.7rem;
    border: 1px solid var(--skald-border);
    border-radius: 999px;
    background: var(--skald-bg);
    font-size: 0.85rem;
  }

  .name {
    min-width: 0;
    max-width: 16rem;
    overflow: hidden;
    text-overflow: ellipsis;
    white-space: nowrap;
    font-weight: 600;
  }

  .state {
    color: var(--skald-text-muted);
    font-variant-numeric: tabular-nums;
    overflow-wrap: anywhere;
  }

  .chip[data-state='ready'] .state {
    color: var(--skald-ok);
  }

  .chip[data-state='failed'] {
    border-color: var(--skald-error);
    border-radius: var(--skald-radius);
  }

  .chip[data-state='failed'] .state {
    color: var(--skald-error);
  }

  .remove {
    color: var(--skald-text-muted);
    border-radius: 999px;
  }

  .note {
    margin: 0;
  }
`;
