/** Styles for `<skald-note-view>`. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
    max-width: 48rem;
  }

  h3 {
    margin: 0 0 var(--skald-space-1);
    font-size: 1.4rem;
    line-height: 1.3;
    overflow-wrap: anywhere;
  }

  h3:focus {
    outline: none;
  }

  h3:focus-visible {
    outline: 0.2rem solid var(--skald-focus);
  }

  .small {
    margin: 0 0 var(--skald-space-3);
  }

  .body {
    margin-bottom: var(--skald-space-3);
  }

  .back {
    display: none;
    margin-bottom: var(--skald-space-2);
  }

  textarea {
    min-height: 12rem;
  }

  @media (max-width: 60rem) {
    .back {
      display: inline-flex;
    }
  }
`;
