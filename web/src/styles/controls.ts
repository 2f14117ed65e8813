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
