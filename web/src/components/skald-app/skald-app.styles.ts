/** Styles for `<skald-app>`; colours and spacing come from the tokens in styles/global.css. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
    color: var(--skald-text);
    font-family: var(--skald-font);
  }

  main {
    max-width: 48rem;
    margin: 0 auto;
    padding: var(--skald-space-4) var(--skald-space-3);
  }

  header {
    margin-bottom: var(--skald-space-3);
  }

  h1 {
    margin: 0;
    font-size: 2rem;
    line-height: 1.2;
    color: var(--skald-accent);
  }

  .tagline {
    margin: var(--skald-space-1) 0 0;
    color: var(--skald-text-muted);
  }

  .status {
    display: flex;
    flex-wrap: wrap;
    align-items: baseline;
    gap: var(--skald-space-2);
    margin: 0;
    padding: var(--skald-space-3);
    background: var(--skald-surface);
    border: 1px solid var(--skald-border);
    border-radius: var(--skald-radius);
    overflow-wrap: anywhere;
  }

  .label {
    font-weight: 600;
  }

  .badge {
    display: inline-block;
    padding: 0 var(--skald-space-2);
    border-radius: var(--skald-radius);
    font-family: var(--skald-font-mono);
    font-size: 0.9em;
    background: var(--skald-bg);
    border: 1px solid var(--skald-border);
  }

  .badge[data-state='ok'] {
    color: var(--skald-ok);
    background: var(--skald-ok-bg);
    border-color: currentColor;
  }

  .badge[data-state='no-token'] {
    color: var(--skald-warn);
    background: var(--skald-warn-bg);
    border-color: currentColor;
  }

  .badge[data-state='error'] {
    color: var(--skald-error);
    background: var(--skald-error-bg);
    border-color: currentColor;
  }

  .message {
    flex: 1 1 20ch;
    min-width: 0;
  }

  .version {
    color: var(--skald-text-muted);
  }

  code {
    font-family: var(--skald-font-mono);
    font-size: 0.95em;
  }
`;
