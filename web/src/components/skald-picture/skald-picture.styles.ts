/** Styles for `<skald-picture>`. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
    margin: var(--skald-space-2) 0 0;
  }

  a {
    display: inline-block;
    max-width: 100%;
    border-radius: var(--skald-radius);
    vertical-align: top;
  }

  /* At most the column's width and 360px high, its proportions kept. */
  img {
    display: block;
    max-width: 100%;
    max-height: 360px;
    width: auto;
    height: auto;
    border: 1px solid var(--skald-border);
    border-radius: var(--skald-radius);
    background: var(--skald-surface);
  }

  .placeholder {
    display: flex;
    align-items: center;
    justify-content: center;
    width: 12rem;
    max-width: 100%;
    height: 8rem;
    border: 1px dashed var(--skald-border);
    border-radius: var(--skald-radius);
    background: var(--skald-code-bg);
  }
`;
