/** Styles for `<skald-toasts>`. */
import { css } from 'lit';

export const styles = css`
  .region {
    position: fixed;
    right: var(--skald-space-3);
    bottom: var(--skald-space-3);
    display: flex;
    flex-direction: column;
    gap: var(--skald-space-2);
    z-index: 10;
    max-width: min(24rem, calc(100vw - 2rem));
  }

  .toast {
    display: flex;
    align-items: flex-start;
    gap: var(--skald-space-2);
    padding: var(--skald-space-2) var(--skald-space-2) var(--skald-space-2) var(--skald-space-3);
    border: 1px solid var(--skald-border);
    border-left: 0.3rem solid var(--skald-accent);
    border-radius: var(--skald-radius);
    background: var(--skald-surface);
    box-shadow: var(--skald-shadow);
  }

  .toast[data-kind='error'] {
    border-left-color: var(--skald-error);
  }

  .text {
    flex: 1;
    min-width: 0;
    overflow-wrap: anywhere;
  }

  .text p {
    margin: 0.15rem 0 0;
  }

  button {
    min-height: 2rem;
    min-width: 2rem;
    padding: 0;
  }
`;
