/** Styles for `<skald-recovery-code>`. */
import { css } from 'lit';

export const styles = css`
  .code {
    margin: 0 0 var(--skald-space-3);
    padding: var(--skald-space-3);
    border: 2px dashed var(--skald-border);
    border-radius: var(--skald-radius);
    background: var(--skald-bg);
    font-family: var(--skald-font-mono);
    font-size: 1.35rem;
    letter-spacing: 0.05em;
    text-align: center;
    overflow-wrap: anywhere;
    user-select: all;
  }

  .warning {
    margin-top: var(--skald-space-3);
  }

  .confirm {
    display: flex;
    gap: var(--skald-space-2);
    align-items: flex-start;
    margin: var(--skald-space-3) 0;
  }

  .confirm input {
    width: 1.25rem;
    height: 1.25rem;
    margin-top: 0.15rem;
    flex: none;
  }

  .confirm label {
    font-weight: 500;
  }

  @media print {
    .no-print {
      display: none !important;
    }

    .panel {
      box-shadow: none;
      border: none;
    }
  }

  /* Focused by the screen itself, to be read out first: no ring on a heading. */
  h1[tabindex='-1']:focus {
    outline: none;
  }
`;
