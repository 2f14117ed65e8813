/** Styles for `<skald-admin-voice>`. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
  }

  /* Voice input, reading aloud, the catalogue: one after the other, a rule between. */
  .part {
    margin-top: var(--skald-space-3);
    padding-top: var(--skald-space-3);
    border-top: 1px solid var(--skald-border);
  }

  .part > h4 {
    margin: 0 0 var(--skald-space-2);
  }

  .part > p {
    margin: 0 0 var(--skald-space-2);
  }

  dl.facts {
    margin: 0 0 var(--skald-space-2);
  }

  .list-title {
    margin: var(--skald-space-3) 0 var(--skald-space-1);
    font-size: 0.95rem;
  }

  .items > li {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    justify-content: space-between;
    gap: var(--skald-space-1) var(--skald-space-3);
  }

  .model,
  .file {
    font-family: var(--skald-font-mono);
    font-size: 0.9em;
  }

  .add {
    margin-top: var(--skald-space-3);
  }

  .add .field {
    margin-bottom: var(--skald-space-2);
  }

  .add .notice {
    margin: var(--skald-space-2) 0 0;
  }

  .add .hint + .hint,
  .add [aria-live] .hint {
    margin-top: var(--skald-space-2);
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

  .tag.ok {
    color: var(--skald-ok);
    background: var(--skald-ok-bg);
  }

  .checksums {
    margin-top: var(--skald-space-1);
    color: var(--skald-text-muted);
  }

  .checksums summary {
    cursor: pointer;
    width: fit-content;
    max-width: 100%;
  }

  .checksums ul {
    list-style: none;
    margin: var(--skald-space-1) 0 0;
    padding-left: var(--skald-space-3);
  }

  .checksums li + li {
    margin-top: var(--skald-space-1);
  }

  .checksums .sum {
    display: block;
    overflow-wrap: anywhere;
    color: var(--skald-text);
  }

  .entry .notice {
    margin: var(--skald-space-2) 0 0;
  }

  .entry .notice .small {
    margin-top: var(--skald-space-1);
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
`;
