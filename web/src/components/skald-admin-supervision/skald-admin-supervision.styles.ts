/** Styles for `<skald-admin-supervision>`. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
  }

  .ask {
    display: grid;
    grid-template-columns: repeat(auto-fit, minmax(min(100%, 12rem), 1fr));
    gap: 0 var(--skald-space-3);
    align-items: end;
  }

  li p.small {
    margin: var(--skald-space-1) 0 0;
  }

  /* Someone can open another's space now: set apart like a remote provider. */
  .tag.active {
    color: var(--skald-remote);
    background: var(--skald-remote-bg);
  }

  .danger-text {
    color: var(--skald-error);
  }
`;
