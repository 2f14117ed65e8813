/** Styles for `<skald-login>`. */
import { css } from 'lit';

export const styles = css`
  .people {
    list-style: none;
    margin: var(--skald-space-3) 0;
    padding: 0;
    display: grid;
    grid-template-columns: repeat(auto-fill, minmax(9rem, 1fr));
    gap: var(--skald-space-3);
  }

  .person {
    width: 100%;
    min-height: 11rem;
    flex-direction: column;
    gap: var(--skald-space-2);
    padding: var(--skald-space-3);
    border-radius: calc(var(--skald-radius) * 2);
    background: var(--skald-bg);
  }

  .person:hover:not(:disabled) {
    background: var(--skald-selected);
  }

  .person-name {
    font-size: 1.1rem;
    font-weight: 600;
    overflow-wrap: anywhere;
  }

  .person-note {
    font-size: 0.85rem;
    font-weight: 400;
    color: var(--skald-text-muted);
  }

  .who {
    display: flex;
    flex-direction: column;
    align-items: center;
    gap: var(--skald-space-2);
    margin-bottom: var(--skald-space-3);
    text-align: center;
  }

  .password-row {
    display: flex;
    gap: var(--skald-space-2);
  }

  .password-row input {
    flex: 1;
    min-width: 0;
  }

  .reveal {
    flex: none;
  }

  .spread {
    justify-content: space-between;
  }

  .below {
    margin: var(--skald-space-3) 0 0;
    text-align: center;
  }

  .mono {
    font-family: var(--skald-font-mono);
    letter-spacing: 0.04em;
  }
`;
