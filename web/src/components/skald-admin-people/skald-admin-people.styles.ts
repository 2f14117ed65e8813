/** Styles for `<skald-admin-people>`. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
  }

  .add {
    display: grid;
    grid-template-columns: repeat(auto-fit, minmax(min(100%, 12rem), 1fr));
    gap: 0 var(--skald-space-3);
    align-items: end;
  }

  .code-box {
    margin-top: var(--skald-space-3);
  }

  .code-box p {
    margin: 0 0 var(--skald-space-2);
  }

  .code {
    font-family: var(--skald-font-mono);
    font-size: 1.3rem;
    font-weight: 700;
    letter-spacing: 0.05em;
    overflow-wrap: anywhere;
    color: var(--skald-text);
  }

  .rows > li {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    justify-content: space-between;
    gap: var(--skald-space-2);
  }

  .person {
    display: flex;
    align-items: center;
    gap: var(--skald-space-2);
    min-width: 0;
  }

  .rename {
    display: flex;
    flex-wrap: wrap;
    gap: var(--skald-space-1);
  }

  .rename input {
    width: 12rem;
    max-width: 100%;
  }

  .tools {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    gap: var(--skald-space-1);
  }

  .role-change {
    display: inline-flex;
    flex-wrap: wrap;
    gap: var(--skald-space-1);
  }

  .role-change select {
    width: auto;
  }

  .danger-text {
    color: var(--skald-error);
  }
`;
