/** Styles for `<skald-used-memories>`: a quiet line under the reply, its list indented. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
    margin: var(--skald-space-2) 0 0;
    font-size: 0.85rem;
    color: var(--skald-text-muted);
  }

  summary {
    display: inline-flex;
    align-items: center;
    gap: var(--skald-space-1);
    padding: 0.15rem 0.35rem;
    margin-left: -0.35rem;
    border-radius: var(--skald-radius);
    cursor: pointer;
    list-style: none;
  }

  summary::-webkit-details-marker {
    display: none;
  }

  summary::after {
    content: '▸';
    font-size: 0.8em;
  }

  details[open] summary::after {
    content: '▾';
  }

  summary:hover {
    background: var(--skald-hover);
    color: var(--skald-text);
  }

  ul {
    margin: var(--skald-space-1) 0;
    padding-left: 1.25rem;
  }

  li {
    margin: 0 0 var(--skald-space-1);
    overflow-wrap: anywhere;
  }

  a {
    color: var(--skald-accent);
  }

  .pool::before {
    content: ' · ';
  }

  .hint {
    font-size: inherit;
  }
`;
