/**
 * The overlay shown while files are dragged over a drop target (the conversation, the
 * Files page): a title with its icon and a line on where the files go. Its markup is
 * `dropOverlay` in components/drop-overlay.ts. The target sets `position: relative`;
 * the overlay covers it and lets the drop through to it.
 */
import { css } from 'lit';

export const dropOverlayStyles = css`
  .drop-overlay {
    position: absolute;
    inset: 0;
    z-index: 2;
    display: flex;
    flex-direction: column;
    align-items: center;
    justify-content: center;
    gap: var(--skald-space-2);
    padding: var(--skald-space-4);
    background: var(--skald-accent-bg);
    color: var(--skald-text);
    text-align: center;
    /* The target underneath stays the one the files are dropped on. */
    pointer-events: none;
  }

  .drop-overlay p {
    margin: 0;
    max-width: 32rem;
  }

  .drop-title {
    display: inline-flex;
    align-items: center;
    gap: var(--skald-space-2);
    font-size: 1.3rem;
    font-weight: 600;
  }

  .drop-title svg {
    width: 1.5rem;
    height: 1.5rem;
  }
`;
