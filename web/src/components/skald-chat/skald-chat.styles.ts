/** Styles for `<skald-chat>`: a header, the scrolling conversation, the composer. */
import { css } from 'lit';

export const styles = css`
  /* Positioned, for the drop overlay over the whole conversation. */
  :host {
    position: relative;
    display: flex;
    flex-direction: column;
    height: 100%;
    min-height: 0;
  }

  .bar {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    justify-content: space-between;
    gap: var(--skald-space-2) var(--skald-space-3);
    padding: var(--skald-space-2) var(--skald-space-3);
    padding-left: var(--skald-bar-indent, var(--skald-space-3));
    border-bottom: 1px solid var(--skald-border);
    background: var(--skald-bg);
  }

  .title {
    margin: 0;
    font-size: 1.05rem;
    font-weight: 600;
    min-width: 0;
    overflow: hidden;
    text-overflow: ellipsis;
    white-space: nowrap;
    flex: 1 1 8rem;
  }

  .bar-tools {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    gap: var(--skald-space-2);
  }

  /* Positioned, so the visually hidden labels inside are placed (and clipped) within
     the scrolling log rather than against the page. */
  .log {
    position: relative;
    flex: 1;
    min-height: 0;
    overflow-y: auto;
    padding: var(--skald-space-3) var(--skald-space-3) var(--skald-space-2);
  }

  .log:focus {
    outline: none;
  }

  .column {
    max-width: 48rem;
    margin: 0 auto;
  }

  .center {
    text-align: center;
  }

  /* Above the first turn read: the earlier ones, on request or when scrolled to. */
  .earlier {
    display: flex;
    flex-direction: column;
    align-items: center;
    gap: 0.5rem;
    margin: 0.5rem 0 1rem;
  }

  .empty {
    margin: 18vh auto 0;
    text-align: center;
    color: var(--skald-text-muted);
  }

  .empty h3 {
    color: var(--skald-text);
    font-size: 1.5rem;
    margin: 0 0 var(--skald-space-2);
  }

  .turn {
    margin-bottom: var(--skald-space-4);
  }

  .user {
    display: flex;
    flex-direction: column;
    align-items: flex-end;
    margin-bottom: var(--skald-space-3);
  }

  .user skald-message-edit {
    align-self: stretch;
    margin-left: auto;
  }

  .bubble {
    max-width: 85%;
    padding: 0.6rem 0.9rem;
    border-radius: 1.1rem 1.1rem 0.3rem 1.1rem;
    background: var(--skald-user-bubble);
    white-space: pre-wrap;
    overflow-wrap: anywhere;
  }

  /* The documents a message carried, under its words. */
  .message-attachments {
    display: flex;
    flex-wrap: wrap;
    justify-content: flex-end;
    gap: var(--skald-space-1) var(--skald-space-2);
    max-width: 85%;
    margin: var(--skald-space-1) 0 0;
    padding: 0;
    list-style: none;
  }

  .message-attachment {
    display: inline-flex;
    align-items: center;
    gap: 0.3rem;
    max-width: 100%;
    padding: 0.1rem 0.6rem;
    border: 1px solid var(--skald-border);
    border-radius: 999px;
    background: var(--skald-surface);
    color: var(--skald-text);
    font-size: 0.85rem;
    text-decoration: none;
  }

  .message-attachment:hover {
    background: var(--skald-hover);
  }

  .message-attachment span {
    overflow: hidden;
    text-overflow: ellipsis;
    white-space: nowrap;
  }

  .message-attachment svg {
    flex: none;
    color: var(--skald-text-muted);
  }

  .assistant {
    min-width: 0;
  }

  .note,
  .stopped {
    margin: var(--skald-space-2) 0;
    font-size: 0.9rem;
    color: var(--skald-text-muted);
    font-style: italic;
  }

  .turn-meta {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    gap: var(--skald-space-2);
    margin: var(--skald-space-2) 0 0;
    font-size: 0.8rem;
    color: var(--skald-text-muted);
  }

  .copy-reply,
  .regenerate,
  .edit-message,
  .versions button {
    color: var(--skald-text-muted);
  }

  .versions {
    display: inline-flex;
    align-items: center;
    gap: 0.1rem;
    font-variant-numeric: tabular-nums;
  }

  .versions button:disabled {
    opacity: 0.4;
  }

  .turn-meta skald-privacy-badge {
    font-size: 0.85em;
  }

  .notice {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    justify-content: space-between;
    gap: var(--skald-space-2);
    margin-top: var(--skald-space-2);
  }

  .thinking {
    display: flex;
    gap: 0.3rem;
    margin: var(--skald-space-2) 0;
    height: 1.5rem;
    align-items: center;
  }

  .thinking span {
    width: 0.45rem;
    height: 0.45rem;
    border-radius: 50%;
    background: var(--skald-text-muted);
    animation: blink 1.2s infinite ease-in-out both;
  }

  .thinking span:nth-child(2) {
    animation-delay: 0.2s;
  }

  .thinking span:nth-child(3) {
    animation-delay: 0.4s;
  }

  @keyframes blink {
    0%,
    80%,
    100% {
      opacity: 0.25;
    }
    40% {
      opacity: 1;
    }
  }

  .bottom {
    padding: var(--skald-space-2) var(--skald-space-3) var(--skald-space-2);
  }

  .parked {
    margin: 0 0 var(--skald-space-2);
  }

  .fineprint {
    margin: var(--skald-space-1) 0 0;
    font-size: 0.75rem;
    color: var(--skald-text-muted);
    text-align: center;
  }

  /* The drop overlay (styles/drop-overlay.ts) over the whole conversation, outlined. */
  .drop-overlay {
    outline: 0.2rem dashed var(--skald-accent);
    outline-offset: -0.4rem;
  }

  /* A short window (200% zoom): the conversation keeps most of the height. */
  @media (max-height: 36rem) {
    .bar {
      padding-top: var(--skald-space-1);
      padding-bottom: var(--skald-space-1);
    }

    .bottom {
      padding-top: var(--skald-space-1);
      padding-bottom: var(--skald-space-1);
    }

    .fineprint {
      display: none;
    }
  }
`;
