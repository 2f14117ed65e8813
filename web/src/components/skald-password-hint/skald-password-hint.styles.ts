/** Styles for `<skald-password-hint>`. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
    font-size: 0.9rem;
  }

  .meter {
    display: grid;
    grid-template-columns: repeat(4, 1fr);
    gap: 0.25rem;
    margin: 0.25rem 0;
  }

  .meter span {
    height: 0.3rem;
    border-radius: 0.15rem;
    background: var(--skald-border);
  }

  .meter[data-state='weak'] span.on {
    background: var(--skald-warn);
  }

  .meter[data-state='ok'] span.on {
    background: var(--skald-ok);
  }

  p {
    margin: 0;
  }

  .text[data-state='ok'] {
    color: var(--skald-ok);
  }

  .text[data-state='weak'] {
    color: var(--skald-warn);
  }

  .why {
    color: var(--skald-text-muted);
    margin-top: 0.25rem;
  }
`;
