/** Styles for `<skald-supervisors>`. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
  }

  li p {
    margin: 0 0 var(--skald-space-1);
  }

  .row-head p {
    margin: 0;
  }

  h4.sub {
    margin: var(--skald-space-3) 0 var(--skald-space-1);
  }

  h5.day {
    margin: var(--skald-space-2) 0 0;
    font-size: 0.9rem;
    font-weight: 600;
    color: var(--skald-text-muted);
  }

  .visits > li {
    padding: var(--skald-space-1) 0;
  }

  .notice.warn {
    margin: 0 0 var(--skald-space-2);
  }

  form .field input {
    max-width: 24rem;
  }
`;
