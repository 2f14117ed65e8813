/**
 * Styles for `<skald-microphone>`, slotted into the composer's wrapping row beside the
 * paperclip (its host takes no box of its own); what it is doing on a line of its own.
 */
import { css } from 'lit';

export const styles = css`
  :host {
    display: contents;
  }

  .microphone {
    flex: none;
    align-self: flex-end;
    min-height: 2.5rem;
    min-width: 2.5rem;
    color: var(--skald-text-muted);
  }

  .microphone.listening {
    color: var(--skald-danger, #b3261e);
  }

  .state {
    flex: 1 0 100%;
    order: 10;
    margin: 0;
    font-size: 0.85rem;
    color: var(--skald-text-muted);
  }
`;
