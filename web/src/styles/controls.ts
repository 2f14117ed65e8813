/**
 * Styles shared by the components' shadow roots: buttons, fields, notices,
 * and the visually-hidden helper for screen-reader-only text. Colours come
 * from the tokens in global.css, so light and dark follow the OS.
 */
import { css } from 'lit';

export const controls = css`
  *,
  *::before,
  *::after {
    box-sizing: border-box;
  }

  :host {
    color: var(--skald-text);
    font-family: var(--skald-font);
  }

  :focus-visible {
    outline: 0.2rem solid var(--skald-focus);
    outline-offset: 0.15rem;
  }

  .visually-hidden {
    position: absolute !important;
    width: 1px;
    height: 1px;
    margin: -1px;
    padding: 0;
    overflow: hidden;
    clip: rect(0 0 0 0);
    white-space: nowrap;
    border: 0;
  }

  button,
  .button {
    display: inline-flex;
    align-items: center;
    justify-content: center;
    gap: var(--skald-space-2);
    min-height: 2.5rem;
    padding: 0 var(--skald-space-3);
    border: 1px solid var(--skald-border);
    border-radius: var(--skald-radius);
    background: var(--skald-surface);
    color: var(--skald-text);
    font: inherit;
    font-weight: 500;
    cursor: pointer;
    text-decoration: none;
  }

  button:hover:not(:disabled) {
    background: var(--skald-hover);
  }

  button:disabled {
    opacity: 0.55;
    cursor: not-allowed;
  }

  button.primary {
    background: var(--skald-accent);
    border-color: var(--skald-accent);
    color: var(--skald-on-accent);
  }

  button.primary:hover:not(:disabled) {
    background: var(--skald-accent);
    filter: brightness(1.08);
  }

  button.danger {
    color: var(--skald-error);
    border-color: currentColor;
  }

  button.quiet {
    border-color: transparent;
    background: transparent;
  }

  button.quiet:hover:not(:disabled) {
    background: var(--skald-hover);
  }

  /* A button that shows only an icon (components/icon-button.ts): smaller, and square. */
  button.icon-button {
    min-height: 2rem;
    min-width: 2rem;
    padding: 0 0.4rem;
    gap: 0.3rem;
    font-size: 0.9rem;
  }

  button.link {
    min-height: auto;
    padding: 0;
    border: none;
    background: none;
    color: var(--skald-accent);
    text-decoration: underline;
    font-weight: 400;
  }

  button.link:hover:not(:disabled) {
    background: none;
  }

  .field {
    display: flex;
    flex-direction: column;
    gap: var(--skald-space-1);
    margin-bottom: var(--skald-space-3);
  }

  label {
    font-weight: 600;
  }

  .hint {
    margin: 0;
    color: var(--skald-text-muted);
    font-size: 0.9rem;
  }

  input[type='text'],
  input[type='password'],
  input[type='search'],
  input[type='url'],
  input:not([type]),
  select,
  textarea {
    width: 100%;
    min-height: 2.5rem;
    padding: var(--skald-space-2) var(--skald-space-2);
    border: 1px solid var(--skald-border);
    border-radius: var(--skald-radius);
    background: var(--skald-surface);
    color: var(--skald-text);
    font: inherit;
  }

  input:focus-visible,
  select:focus-visible,
  textarea:focus-visible {
    outline: 0.15rem solid var(--skald-focus);
    outline-offset: 0;
    border-color: var(--skald-focus);
  }

  input[aria-invalid='true'] {
    border-color: var(--skald-error);
  }

  .notice {
    margin: 0 0 var(--skald-space-3);
    padding: var(--skald-space-2) var(--skald-space-3);
    border-radius: var(--skald-radius);
    border: 1px solid currentColor;
  }

  .notice.error {
    color: var(--skald-error);
    background: var(--skald-error-bg);
  }

  .notice.warn {
    color: var(--skald-warn);
    background: var(--skald-warn-bg);
  }

  .notice.ok {
    color: var(--skald-ok);
    background: var(--skald-ok-bg);
  }

  .notice p {
    margin: 0;
  }

  .actions {
    display: flex;
    flex-wrap: wrap;
    gap: var(--skald-space-2);
    align-items: center;
  }

  .panel {
    background: var(--skald-surface);
    border: 1px solid var(--skald-border);
    border-radius: calc(var(--skald-radius) * 2);
    box-shadow: var(--skald-shadow);
    padding: var(--skald-space-4);
  }

  code,
  pre {
    font-family: var(--skald-font-mono);
  }

  /* global.css says this for the document; shadow roots need it said again. */
  @media (prefers-reduced-motion: reduce) {
    *,
    *::before,
    *::after {
      animation: none !important;
      transition: none !important;
    }
  }

  /* A small pill naming a state or a kind; pages and panels colour it. */
  .tag {
    display: inline-block;
    padding: 0 0.5rem;
    border-radius: 999px;
    border: 1px solid currentColor;
    font-size: 0.8rem;
    font-weight: 600;
    line-height: 1.5rem;
    white-space: nowrap;
  }
`;

/** A full-window screen with a centred panel: setup, picker, enrolment, recovery. */
export const screen = css`
  *,
  *::before,
  *::after {
    box-sizing: border-box;
  }

  :host {
    display: block;
    min-height: 100vh;
  }

  .screen {
    min-height: 100vh;
    display: flex;
    flex-direction: column;
    align-items: center;
    justify-content: center;
    padding: var(--skald-space-4) var(--skald-space-3);
    gap: var(--skald-space-3);
  }

  .panel {
    width: min(100%, 32rem);
  }

  .panel.wide {
    width: min(100%, 44rem);
  }

  h1 {
    margin: 0 0 var(--skald-space-2);
    font-size: 1.6rem;
    line-height: 1.25;
  }

  h2 {
    margin: 0 0 var(--skald-space-2);
    font-size: 1.2rem;
  }

  .lead {
    margin: 0 0 var(--skald-space-3);
    color: var(--skald-text-muted);
  }

  .brand {
    margin: 0;
    font-size: 1rem;
    font-weight: 700;
    letter-spacing: 0.02em;
    color: var(--skald-accent);
  }
`;

/** The host of a page of the workspace: fills the space beside the navigation. */
export const pageHost = css`
  :host {
    display: flex;
    flex-direction: column;
    height: 100%;
    min-height: 0;
  }
`;

/**
 * A page of the workspace beside the navigation: a bar with the page's
 * heading, then a scrolling column of blocks. Notes, privacy, my data, the
 * administrator's pages and the inbox share it.
 */
export const page = css`
  .bar {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    justify-content: space-between;
    gap: var(--skald-space-2) var(--skald-space-3);
    min-height: 3.25rem;
    padding: var(--skald-space-2) var(--skald-space-3);
    padding-left: var(--skald-bar-indent, var(--skald-space-3));
    border-bottom: 1px solid var(--skald-border);
    background: var(--skald-bg);
  }

  .bar h2 {
    margin: 0;
    font-size: 1.05rem;
    font-weight: 600;
  }

  .scroll {
    flex: 1;
    min-height: 0;
    overflow-y: auto;
    padding: var(--skald-space-3);
  }

  .column {
    max-width: 52rem;
    margin: 0 auto;
  }

  .lead {
    margin: 0 0 var(--skald-space-3);
    color: var(--skald-text-muted);
  }

  .block {
    margin: 0 0 var(--skald-space-3);
    padding: var(--skald-space-3);
    background: var(--skald-surface);
    border: 1px solid var(--skald-border);
    border-radius: calc(var(--skald-radius) * 1.5);
    overflow-wrap: anywhere;
  }

  .block > h3 {
    margin: 0 0 var(--skald-space-2);
    font-size: 1.1rem;
  }

  .block > p {
    margin: 0 0 var(--skald-space-2);
  }

  h4 {
    margin: 0;
    font-size: 1rem;
  }

  .rows {
    list-style: none;
    margin: 0;
    padding: 0;
  }

  .rows > li {
    padding: var(--skald-space-2) 0;
  }

  .rows > li + li {
    border-top: 1px solid var(--skald-border);
  }

  .row-head {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    justify-content: space-between;
    gap: var(--skald-space-1) var(--skald-space-2);
  }

  .row-title {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    gap: var(--skald-space-1) var(--skald-space-2);
    min-width: 0;
  }

  .muted {
    color: var(--skald-text-muted);
  }

  .small {
    font-size: 0.9rem;
  }

  .tag.local {
    color: var(--skald-private);
    background: var(--skald-private-bg);
  }

  .tag.remote {
    color: var(--skald-remote);
    background: var(--skald-remote-bg);
  }

  .tag.plain {
    color: var(--skald-text-muted);
    background: var(--skald-surface);
  }

  .tag.bad {
    color: var(--skald-error);
    background: var(--skald-error-bg);
  }

  dl.facts {
    display: grid;
    grid-template-columns: minmax(8rem, max-content) 1fr;
    gap: var(--skald-space-1) var(--skald-space-3);
    margin: 0;
  }

  dl.facts dt {
    font-weight: 600;
  }

  dl.facts dd {
    margin: 0;
    min-width: 0;
  }

  .empty {
    margin: 12vh auto 0;
    text-align: center;
    color: var(--skald-text-muted);
  }

  .empty h3 {
    color: var(--skald-text);
    font-size: 1.3rem;
    margin: 0 0 var(--skald-space-2);
  }

  .grid-fields {
    display: grid;
    grid-template-columns: repeat(auto-fit, minmax(min(100%, 14rem), 1fr));
    gap: 0 var(--skald-space-3);
  }

  .check {
    display: flex;
    align-items: flex-start;
    gap: var(--skald-space-2);
    margin-bottom: var(--skald-space-2);
  }

  .check input {
    margin-top: 0.3rem;
    width: 1.1rem;
    height: 1.1rem;
    flex: none;
  }

  .check label {
    font-weight: 500;
  }

  input[type='number'],
  input[type='email'] {
    width: 100%;
    min-height: 2.5rem;
    padding: var(--skald-space-2);
    border: 1px solid var(--skald-border);
    border-radius: var(--skald-radius);
    background: var(--skald-surface);
    color: var(--skald-text);
    font: inherit;
  }

  textarea {
    resize: vertical;
    line-height: 1.5;
  }

  pre.text {
    margin: 0;
    padding: var(--skald-space-2) var(--skald-space-3);
    max-height: 24rem;
    overflow: auto;
    white-space: pre-wrap;
    overflow-wrap: anywhere;
    background: var(--skald-code-bg);
    border-radius: var(--skald-radius);
    font-size: 0.9rem;
  }

  .num {
    font-variant-numeric: tabular-nums;
  }

  @media (max-width: 30rem) {
    .scroll {
      padding: var(--skald-space-2);
    }

    .block {
      padding: var(--skald-space-2);
    }

    dl.facts {
      grid-template-columns: 1fr;
    }

    dl.facts dd {
      margin-bottom: var(--skald-space-2);
    }
  }
`;
