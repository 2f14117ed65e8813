/** Styles for `<skald-privacy>`. */
import { css } from 'lit';

export const styles = css`
  .keys li {
    display: flex;
    align-items: center;
    gap: var(--skald-space-2);
    font-weight: 500;
  }

  .key-dot {
    width: 0.6rem;
    height: 0.6rem;
    border-radius: 50%;
    background: var(--skald-ok);
    flex: none;
  }

  .block p.small,
  li p.small {
    margin: var(--skald-space-1) 0 0;
  }

  .notice.ok {
    margin: var(--skald-space-3) 0 var(--skald-space-2);
  }

  h4.sub {
    margin: var(--skald-space-3) 0 var(--skald-space-1);
  }

  [hidden] {
    display: none !important;
  }

  pre.text {
    margin-top: var(--skald-space-2);
  }

  /* The reminders the administrator can read, one a line. */
  ul.plain {
    list-style: none;
    margin: 0;
    padding: 0;
  }
`;
