/** Styles for `<skald-inbox>`. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: flex;
    flex-direction: column;
    height: 100%;
    min-height: 0;
  }

  .bar {
    padding: var(--skald-space-2) var(--skald-space-3);
    padding-left: var(--skald-bar-indent, var(--skald-space-3));
    border-bottom: 1px solid var(--skald-border);
    min-height: 3.25rem;
    display: flex;
    align-items: center;
  }

  h2 {
    margin: 0;
    font-size: 1.05rem;
  }

  .scroll {
    flex: 1;
    min-height: 0;
    overflow-y: auto;
    padding: var(--skald-space-3);
  }

  .column {
    max-width: 48rem;
    margin: 0 auto;
  }

  ul.cards {
    list-style: none;
    margin: 0;
    padding: 0;
  }

  ul.cards > li {
    margin-bottom: var(--skald-space-4);
  }

  skald-notice-list {
    margin-bottom: var(--skald-space-3);
  }

  .open {
    display: flex;
    justify-content: space-between;
    gap: var(--skald-space-2);
    margin: 0;
    font-size: 0.9rem;
  }

  .empty {
    margin: 15vh auto 0;
    text-align: center;
    color: var(--skald-text-muted);
  }

  .empty h3 {
    color: var(--skald-text);
    font-size: 1.3rem;
    margin: 0 0 var(--skald-space-2);
  }
`;
