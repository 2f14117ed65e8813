/** Styles for `<skald-tool-call>`. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
    margin: var(--skald-space-2) 0;
  }

  details {
    border: 1px solid var(--skald-border);
    border-radius: var(--skald-radius);
    background: var(--skald-surface);
    font-size: 0.9rem;
  }

  summary {
    display: flex;
    align-items: center;
    gap: var(--skald-space-2);
    padding: 0.4rem 0.75rem;
    cursor: pointer;
    list-style: none;
    border-radius: var(--skald-radius);
  }

  summary::-webkit-details-marker {
    display: none;
  }

  summary::after {
    content: '▸';
    margin-left: auto;
    color: var(--skald-text-muted);
  }

  details[open] summary::after {
    content: '▾';
  }

  .label {
    font-weight: 600;
  }

  .sentence {
    margin: 0 0 var(--skald-space-2);
  }

  .status {
    color: var(--skald-text-muted);
  }

  .status[data-status='error'],
  .status[data-status='denied'] {
    color: var(--skald-error);
  }

  .status[data-status='waiting'] {
    color: var(--skald-warn);
  }

  .icon {
    width: 0.6rem;
    height: 0.6rem;
    border-radius: 50%;
    background: var(--skald-text-muted);
    flex: none;
  }

  .icon[data-status='ok'] {
    background: var(--skald-ok);
  }

  .icon[data-status='error'],
  .icon[data-status='denied'] {
    background: var(--skald-error);
  }

  .icon[data-status='waiting'] {
    background: var(--skald-warn);
  }

  .icon[data-status='running'] {
    background: var(--skald-accent);
    animation: pulse 1s ease-in-out infinite alternate;
  }

  @keyframes pulse {
    from {
      opacity: 0.3;
    }
    to {
      opacity: 1;
    }
  }

  .body {
    padding: 0 0.75rem 0.75rem;
  }

  .heading {
    margin: 0.5rem 0 0.25rem;
    font-weight: 600;
    font-size: 0.85rem;
    color: var(--skald-text-muted);
  }

  pre {
    margin: 0;
    padding: 0.5rem;
    max-height: 16rem;
    overflow: auto;
    border-radius: 0.25rem;
    background: var(--skald-code-bg);
    white-space: pre-wrap;
    overflow-wrap: anywhere;
    font-size: 0.85rem;
  }

  .progress {
    display: inline-flex;
    align-items: center;
    gap: var(--skald-space-2);
    min-width: 0;
    color: var(--skald-text-muted);
  }

  .progress progress {
    width: 6rem;
  }

  .progress-text {
    overflow: hidden;
    text-overflow: ellipsis;
    white-space: nowrap;
  }
`;
