/**
 * Styles for `<skald-admin-backups>`: the two forms, the progress bar of the backup
 * running, and the table of recent backups, which scrolls sideways in its own box when
 * the window is narrow while a long path wraps.
 */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
  }

  .points {
    margin: 0 0 var(--skald-space-3);
    padding-left: 1.25rem;
  }

  .points li + li {
    margin-top: var(--skald-space-1);
  }

  input[type='time'] {
    width: 100%;
    min-height: 2.5rem;
    padding: var(--skald-space-2);
    border: 1px solid var(--skald-border);
    border-radius: var(--skald-radius);
    background: var(--skald-surface);
    color: var(--skald-text);
    font: inherit;
  }

  .check .hint {
    margin-top: var(--skald-space-1);
  }

  .error-text {
    color: var(--skald-error);
  }

  .outcome {
    margin-top: var(--skald-space-3);
  }

  .outcome > p {
    margin: 0 0 var(--skald-space-1);
  }

  .outcome code,
  td code {
    overflow-wrap: anywhere;
  }

  progress {
    display: block;
    width: 100%;
    height: 0.75rem;
    appearance: none;
    border: 1px solid var(--skald-border);
    border-radius: 999px;
    background: var(--skald-bg);
    overflow: hidden;
  }

  progress::-webkit-progress-bar {
    background: var(--skald-bg);
  }

  progress::-webkit-progress-value {
    background: var(--skald-accent);
  }

  progress::-moz-progress-bar {
    background: var(--skald-accent);
  }

  .progress .hint {
    margin-top: var(--skald-space-1);
  }

  .table-wrap {
    overflow-x: auto;
  }

  table {
    width: 100%;
    border-collapse: collapse;
  }

  th,
  td {
    padding: var(--skald-space-2);
    border-bottom: 1px solid var(--skald-border);
    text-align: left;
    vertical-align: top;
    white-space: nowrap;
  }

  th[scope='row'] {
    font-weight: 500;
  }

  td.path {
    white-space: normal;
    min-width: 12rem;
  }

  .why {
    display: block;
    max-width: 20rem;
    margin-top: var(--skald-space-1);
    white-space: normal;
  }

  .num {
    text-align: right;
  }

  .tag.ok {
    color: var(--skald-ok);
    background: var(--skald-ok-bg);
  }

  .schedule-now {
    margin: 0 0 var(--skald-space-3);
  }

  .schedule-now p {
    margin: 0 0 var(--skald-space-1);
  }
`;
