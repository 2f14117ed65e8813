/** Styles for `<skald-setup>`. */
import { css } from 'lit';

export const styles = css`
  .steps {
    list-style: none;
    display: flex;
    flex-wrap: wrap;
    gap: var(--skald-space-3);
    margin: var(--skald-space-2) 0 var(--skald-space-3);
    padding: 0;
    color: var(--skald-text-muted);
    font-size: 0.9rem;
  }

  .steps li {
    display: flex;
    align-items: center;
    gap: var(--skald-space-1);
  }

  .number {
    display: inline-flex;
    align-items: center;
    justify-content: center;
    width: 1.5rem;
    height: 1.5rem;
    border-radius: 50%;
    border: 1px solid currentColor;
    font-size: 0.8rem;
  }

  .steps li[aria-current='step'] {
    color: var(--skald-accent);
    font-weight: 600;
  }

  .steps li[aria-current='step'] .number {
    background: var(--skald-accent);
    border-color: var(--skald-accent);
    color: var(--skald-on-accent);
  }

  .steps li.done {
    color: var(--skald-ok);
  }

  h1[tabindex='-1']:focus {
    outline: none;
  }
`;
