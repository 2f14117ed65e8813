/** Styles for `<skald-model-picker>`. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: inline-flex;
    min-width: 0;
  }

  select {
    width: auto;
    max-width: 100%;
    min-height: 2.25rem;
    padding: 0.25rem 0.5rem;
    font-size: 0.9rem;
  }
`;
