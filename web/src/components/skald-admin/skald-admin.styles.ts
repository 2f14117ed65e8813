/** Styles for `<skald-admin>`: the section tabs under the heading. */
import { css } from 'lit';

export const styles = css`
  .tabs ul {
    display: flex;
    flex-wrap: wrap;
    gap: var(--skald-space-1);
    list-style: none;
    margin: 0;
    padding: 0;
  }

  .tabs a {
    display: inline-flex;
    align-items: center;
    min-height: 2.25rem;
    padding: 0 var(--skald-space-2);
    border-radius: var(--skald-radius);
    color: var(--skald-text);
    text-decoration: none;
    font-weight: 500;
  }

  .tabs a:hover {
    background: var(--skald-hover);
  }

  .tabs a[aria-current='page'] {
    background: var(--skald-selected);
    box-shadow: inset 0 -0.15rem 0 var(--skald-accent);
  }

  .column {
    max-width: 60rem;
  }

  .refused {
    border-left: 0.3rem solid var(--skald-warn);
  }

  a {
    color: var(--skald-accent);
  }
`;
