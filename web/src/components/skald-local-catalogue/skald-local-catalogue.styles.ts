/** Styles for `<skald-local-catalogue>`. */
import { css } from 'lit';

export const styles = css`
  .lead {
    margin-bottom: var(--skald-space-3);
  }

  .entries {
    list-style: none;
    margin: 0;
    padding: 0;
    display: grid;
    gap: var(--skald-space-2);
  }

  .entry {
    padding: var(--skald-space-2) var(--skald-space-3);
    border: 1px solid var(--skald-border);
    border-radius: var(--skald-radius);
    overflow-wrap: anywhere;
  }

  .description {
    margin: var(--skald-space-1) 0;
  }

  .facts {
    margin-bottom: var(--skald-space-2);
  }

  .tag {
    color: var(--skald-text-muted);
  }

  .tag.ok {
    color: var(--skald-ok);
    background: var(--skald-ok-bg);
  }

  .progress {
    margin: var(--skald-space-2) 0;
  }

  progress {
    display: block;
    width: 100%;
    height: 0.75rem;
    appearance: none;
    border: 1px solid var(--skald-border);
    border-radius: 999px;
    background: var(--skald-bg);
    overflow: hidden;
    color: var(--skald-accent);
  }

  progress::-webkit-progress-bar {
    background: var(--skald-bg);
  }

  progress::-webkit-progress-value {
    background: var(--skald-accent);
  }

  progress::-moz-progress-bar {
    background: var(--skald-accent);
  }

  .progress .hint {
    margin-top: var(--skald-space-1);
  }

  .small {
    font-size: 0.9rem;
  }

  .num {
    font-variant-numeric: tabular-nums;
  }

  .notice {
    margin-top: var(--skald-space-2);
  }

  input[type='file'] {
    max-width: 100%;
    font: inherit;
  }

  /* In setup: the memory search model, downloaded along with the chat model. */
  .also-search {
    margin-top: var(--skald-space-3);
  }

  .also-search.check {
    display: grid;
    grid-template-columns: auto 1fr;
    align-items: start;
    gap: var(--skald-space-1) var(--skald-space-2);
  }

  .also-search.check input {
    width: 1.15rem;
    height: 1.15rem;
    margin: 0.15rem 0 0;
  }

  .also-search.check .hint {
    grid-column: 2;
  }
`;
