/** Styles for `<skald-privacy-badge>`. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: inline-flex;
  }

  .badge {
    display: inline-flex;
    align-items: center;
    gap: 0.4rem;
    padding: 0.15rem 0.6rem;
    border-radius: 999px;
    border: 1px solid currentColor;
    font-size: 0.85rem;
    font-weight: 600;
    white-space: nowrap;
  }

  .badge[data-kind='private'] {
    color: var(--skald-private);
    background: var(--skald-private-bg);
  }

  .badge[data-kind='remote'] {
    color: var(--skald-remote);
    background: var(--skald-remote-bg);
  }

  .badge[data-kind='none'] {
    color: var(--skald-text-muted);
  }

  .dot {
    width: 0.5rem;
    height: 0.5rem;
    border-radius: 50%;
    background: currentColor;
  }

  .visually-hidden {
    position: absolute;
    width: 1px;
    height: 1px;
    overflow: hidden;
    clip: rect(0 0 0 0);
    white-space: nowrap;
  }
`;
