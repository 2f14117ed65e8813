/**
 * The blocks a setup step is made of: each a titled section, spaced alike in
 * every component that builds one.
 */
import { css } from 'lit';

export const stepBlocks = css`
  :host {
    display: block;
  }

  .block {
    margin-bottom: var(--skald-space-4);
  }

  h2 {
    font-size: 1.1rem;
    margin: 0 0 var(--skald-space-2);
  }
`;
