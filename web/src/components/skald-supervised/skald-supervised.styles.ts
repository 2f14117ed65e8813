/** Styles for `<skald-supervised>`: the banner, the areas to open, the lists, a conversation read-only, the cards to decide. */
import { css } from 'lit';

export const styles = css`
  .bar a {
    color: var(--skald-accent);
  }

  .banner {
    display: flex;
    align-items: flex-start;
    gap: var(--skald-space-2);
    margin: 0 0 var(--skald-space-3);
  }

  .banner p {
    margin: 0;
  }

  .banner svg {
    flex: none;
    margin-top: 0.15rem;
  }

  .areas {
    display: flex;
    flex-wrap: wrap;
    gap: var(--skald-space-2);
    margin: 0 0 var(--skald-space-3);
  }

  .areas button[aria-pressed='true'] {
    background: var(--skald-selected);
    box-shadow: inset 0 -0.15rem 0 var(--skald-accent);
  }

  .rows a {
    color: var(--skald-accent);
    font-weight: 600;
  }

  .rows p {
    margin: var(--skald-space-1) 0 0;
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

  .item-title {
    font-weight: 600;
    overflow-wrap: anywhere;
  }

  .item-meta {
    font-size: 0.85rem;
    color: var(--skald-text-muted);
    overflow-wrap: anywhere;
  }

  .memory {
    margin: 0;
    overflow-wrap: anywhere;
  }

  .cards {
    list-style: none;
    margin: 0;
    padding: 0;
  }

  .cards > li + li {
    margin-top: var(--skald-space-3);
  }

  .back {
    margin-bottom: var(--skald-space-2);
  }

  .turn {
    margin: var(--skald-space-3) 0;
  }

  .who {
    margin: 0 0 var(--skald-space-1);
    font-size: 0.85rem;
    color: var(--skald-text-muted);
  }

  .user {
    display: flex;
    flex-direction: column;
    align-items: flex-end;
    margin-bottom: var(--skald-space-2);
  }

  .bubble {
    max-width: 85%;
    padding: 0.6rem 0.9rem;
    border-radius: 1.1rem 1.1rem 0.3rem 1.1rem;
    background: var(--skald-user-bubble);
    white-space: pre-wrap;
    overflow-wrap: anywhere;
  }

  .assistant {
    min-width: 0;
  }

  .used {
    margin: var(--skald-space-1) 0;
  }
`;
