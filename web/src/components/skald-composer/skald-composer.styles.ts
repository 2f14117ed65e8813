/** Styles for `<skald-composer>`. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
  }

  /* A wrapping row: what is slotted in may put a part of it on a line of its own. */
  .composer {
    display: flex;
    flex-wrap: wrap;
    align-items: flex-end;
    gap: var(--skald-space-2);
    padding: var(--skald-space-2);
    border: 1px solid var(--skald-border);
    border-radius: calc(var(--skald-radius) * 2);
    background: var(--skald-surface);
    box-shadow: var(--skald-shadow);
  }

  .composer:focus-within {
    border-color: var(--skald-focus);
  }

  textarea {
    flex: 1;
    min-width: 0;
    min-height: 2.5rem;
    max-height: 20rem;
    border: none;
    resize: none;
    background: transparent;
    line-height: 1.5;
    padding: 0.45rem 0.5rem;
  }

  textarea:focus-visible {
    outline: none;
  }

  .send,
  .stop {
    flex: none;
  }

  .square {
    width: 0.7rem;
    height: 0.7rem;
    background: currentColor;
    border-radius: 0.1rem;
  }

  .waiting {
    margin: var(--skald-space-1) 0 0;
    font-size: 0.85rem;
    color: var(--skald-text-muted);
  }
`;
