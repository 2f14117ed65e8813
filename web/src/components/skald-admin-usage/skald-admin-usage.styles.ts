/** Styles for `<skald-admin-usage>`: a table that scrolls sideways in its own box when narrow. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
  }

  .table-wrap {
    overflow-x: auto;
  }

  table {
    width: 100%;
    border-collapse: collapse;
  }

  caption {
    text-align: left;
    font-weight: 600;
    margin-bottom: var(--skald-space-2);
  }

  th,
  td {
    padding: var(--skald-space-2);
    border-bottom: 1px solid var(--skald-border);
    text-align: left;
    white-space: nowrap;
  }

  .num {
    text-align: right;
  }
`;
