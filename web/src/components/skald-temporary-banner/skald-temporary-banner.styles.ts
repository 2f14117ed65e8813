/** Styles for `<skald-temporary-banner>`: a calm strip, not a warning. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
    margin-bottom: var(--skald-space-3);
  }

  .banner {
    display: flex;
    align-items: flex-start;
    gap: var(--skald-space-2);
    margin: 0;
    padding: var(--skald-space-2) var(--skald-space-3);
    border: 1px dashed var(--skald-accent);
    border-radius: var(--skald-radius);
    background: var(--skald-accent-bg);
    color: var(--skald-text);
    font-size: 0.9rem;
  }

  .banner svg {
    flex: none;
    margin-top: 0.15rem;
    color: var(--skald-accent);
  }
`;
