/** Styles for `<skald-markdown>`: readable prose, tables and code. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
    overflow-wrap: anywhere;
    line-height: 1.6;
  }

  .md > :first-child {
    margin-top: 0;
  }

  .md > :last-child {
    margin-bottom: 0;
  }

  p,
  ul,
  ol,
  blockquote,
  table,
  .md-code {
    margin: 0 0 0.75em;
  }

  h1,
  h2,
  h3,
  h4,
  h5,
  h6 {
    margin: 1em 0 0.5em;
    line-height: 1.3;
  }

  h1 {
    font-size: 1.4em;
  }

  h2 {
    font-size: 1.25em;
  }

  h3 {
    font-size: 1.1em;
  }

  h4,
  h5,
  h6 {
    font-size: 1em;
  }

  ul,
  ol {
    padding-left: 1.5em;
  }

  li + li {
    margin-top: 0.25em;
  }

  a {
    color: var(--skald-accent);
  }

  a:not([href]) {
    color: inherit;
    text-decoration: underline dotted;
  }

  a:focus-visible,
  button:focus-visible {
    outline: 0.2rem solid var(--skald-focus);
    outline-offset: 0.1rem;
  }

  blockquote {
    padding-left: 1em;
    border-left: 0.25em solid var(--skald-border);
    color: var(--skald-text-muted);
  }

  hr {
    border: none;
    border-top: 1px solid var(--skald-border);
  }

  code {
    font-family: var(--skald-font-mono);
    font-size: 0.9em;
    padding: 0.1em 0.3em;
    border-radius: 0.25rem;
    background: var(--skald-code-bg);
  }

  table {
    display: block;
    overflow-x: auto;
    border-collapse: collapse;
  }

  th,
  td {
    padding: 0.35em 0.75em;
    border: 1px solid var(--skald-border);
    text-align: left;
  }

  .md-code {
    border: 1px solid var(--skald-border);
    border-radius: var(--skald-radius);
    background: var(--skald-code-bg);
    overflow: hidden;
  }

  .md-code-bar {
    display: flex;
    justify-content: space-between;
    align-items: center;
    padding: 0.2em 0.5em 0.2em 0.75em;
    border-bottom: 1px solid var(--skald-border);
    font-size: 0.8em;
    color: var(--skald-text-muted);
  }

  .md-copy {
    border: 1px solid transparent;
    background: transparent;
    color: inherit;
    font: inherit;
    padding: 0.2em 0.5em;
    border-radius: 0.25rem;
    cursor: pointer;
  }

  .md-copy:hover {
    background: var(--skald-hover);
  }

  pre {
    margin: 0;
    padding: 0.75em;
    overflow-x: auto;
  }

  pre code {
    padding: 0;
    background: none;
    font-size: 0.875em;
    white-space: pre;
  }
`;
