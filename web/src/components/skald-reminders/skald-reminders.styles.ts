/** Styles for `<skald-reminders>`: the form above the list, each reminder a row. */
import { css } from 'lit';

export const styles = css`
  .reminder-form {
    display: flex;
    flex-direction: column;
    gap: var(--skald-space-1);
  }

  .reminder-form label:not(.checkbox) {
    margin-top: var(--skald-space-1);
    font-weight: 600;
  }

  .when {
    display: flex;
    flex-wrap: wrap;
    gap: var(--skald-space-2);
    margin: var(--skald-space-1) 0 0;
    padding: 0;
    border: 0;
  }

  .when legend {
    padding: 0;
    margin-bottom: var(--skald-space-1);
    font-weight: 600;
  }

  .checkbox {
    display: inline-flex;
    align-items: center;
    gap: var(--skald-space-1);
  }

  .readable {
    margin-top: var(--skald-space-2);
  }

  .preview,
  .runs {
    margin: 0;
    padding-left: 1.25rem;
  }

  .heading {
    margin: var(--skald-space-1) 0 0;
    font-weight: 600;
  }

  .actions {
    display: flex;
    flex-wrap: wrap;
    gap: var(--skald-space-1);
    margin-top: var(--skald-space-1);
  }

  .rows > li p {
    margin: var(--skald-space-1) 0;
  }
`;
