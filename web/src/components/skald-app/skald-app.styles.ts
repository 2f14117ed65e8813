/** Styles for `<skald-app>`; colours and spacing come from the tokens in styles/global.css. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
    min-height: 100vh;
  }

  .app {
    position: relative;
    min-height: 100vh;
  }

  h1 {
    color: var(--skald-accent);
    font-size: 2rem;
  }

  .tagline {
    margin: 0 0 var(--skald-space-3);
    color: var(--skald-text-muted);
  }

  .footer {
    position: absolute;
    left: 0;
    right: 0;
    bottom: var(--skald-space-2);
    display: flex;
    justify-content: center;
    gap: var(--skald-space-3);
    font-size: 0.8rem;
    color: var(--skald-text-muted);
  }

  .footer [data-state='ok']::before {
    content: '';
    display: inline-block;
    width: 0.5rem;
    height: 0.5rem;
    margin-right: 0.35rem;
    border-radius: 50%;
    background: var(--skald-ok);
  }

  code {
    font-size: 0.95em;
  }

  .ways {
    margin: 0 0 var(--skald-space-3);
    padding-left: 1.25rem;
    line-height: 1.5;
  }

  .paste label {
    display: block;
    margin-bottom: var(--skald-space-1);
    font-weight: 600;
  }

  .paste-row {
    display: flex;
    flex-wrap: wrap;
    gap: var(--skald-space-2);
  }

  .paste-row input {
    flex: 1 1 16rem;
    min-width: 0;
  }
`;
