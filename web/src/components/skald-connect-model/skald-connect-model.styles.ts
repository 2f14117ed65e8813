/** Styles for `<skald-connect-model>`. */
import { css } from 'lit';

export const styles = css`
  .found {
    list-style: none;
    margin: 0;
    padding: 0;
    display: grid;
    gap: var(--skald-space-2);
  }

  .found li {
    display: flex;
    align-items: center;
    justify-content: space-between;
    gap: var(--skald-space-3);
    padding: var(--skald-space-2) var(--skald-space-3);
    border: 1px solid var(--skald-border);
    border-radius: var(--skald-radius);
  }

  .found li div {
    display: flex;
    flex-direction: column;
    min-width: 0;
    overflow-wrap: anywhere;
  }

  .row {
    display: flex;
    flex-wrap: wrap;
    gap: 0 var(--skald-space-3);
  }

  .row .field {
    flex: 1 1 10rem;
  }

  .row .field.grow {
    flex: 3 1 16rem;
  }

  .finish {
    justify-content: flex-end;
  }
`;
