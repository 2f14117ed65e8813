/** Styles for `<skald-admin-tools>`. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
  }

  .server-list {
    list-style: none;
    margin: 0;
    padding: 0;
  }

  .row-head h3 {
    margin: 0;
    font-size: 1.1rem;
  }

  .row-title {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    gap: var(--skald-space-2);
    min-width: 0;
  }

  p.small {
    margin: var(--skald-space-1) 0 var(--skald-space-2);
  }

  code {
    overflow-wrap: anywhere;
  }

  .tools {
    margin: var(--skald-space-2) 0;
  }

  .tools > li {
    padding: var(--skald-space-2) 0;
    border-top: 1px solid var(--skald-border);
  }

  .side-by-side {
    display: grid;
    grid-template-columns: repeat(auto-fit, minmax(14rem, 1fr));
    gap: var(--skald-space-2);
  }

  .side-by-side pre,
  .stderr pre {
    margin: 0;
    padding: var(--skald-space-2);
    max-height: 16rem;
    overflow: auto;
    background: var(--skald-surface);
    border: 1px solid var(--skald-border);
    border-radius: var(--skald-radius);
    font-family: var(--skald-font-mono);
    font-size: 0.8rem;
    white-space: pre-wrap;
    overflow-wrap: anywhere;
  }

  #server-args,
  #server-env,
  #server-import-json {
    font-family: var(--skald-font-mono);
    font-size: 0.9rem;
  }
`;
