/** Styles for `<skald-files>`: the page as a drop zone, the uploads, the list, the search hits. */
import { css } from 'lit';

export const styles = css`
  .drop {
    position: relative;
    display: flex;
    flex-direction: column;
    flex: 1;
    min-height: 0;
  }

  .drop[data-dragging] {
    outline: 0.2rem dashed var(--skald-accent);
    outline-offset: -0.4rem;
  }

  .pool {
    margin: 0 0 var(--skald-space-3);
  }

  legend {
    padding: 0 var(--skald-space-1);
    font-weight: 600;
  }

  .pool .hint {
    display: block;
  }

  .search {
    margin-bottom: var(--skald-space-3);
  }

  .uploads {
    list-style: none;
    margin: 0 0 var(--skald-space-3);
    padding: 0;
  }

  .upload {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    gap: var(--skald-space-1) var(--skald-space-2);
    padding: var(--skald-space-2) var(--skald-space-3);
    margin-bottom: var(--skald-space-1);
    border: 1px solid var(--skald-border);
    border-radius: var(--skald-radius);
    background: var(--skald-surface);
    overflow-wrap: anywhere;
  }

  .upload p {
    flex: 1;
    min-width: 0;
    margin: 0;
  }

  .upload[data-state='failed'] {
    color: var(--skald-error);
    background: var(--skald-error-bg);
    border-color: currentColor;
  }

  .upload label {
    font-weight: 500;
    min-width: 0;
  }

  .upload progress {
    flex: 1 1 10rem;
    height: 0.75rem;
    accent-color: var(--skald-accent);
  }

  .documents > li,
  .hits > li {
    padding: var(--skald-space-2) 0;
  }

  .file-name {
    font-weight: 600;
    color: var(--skald-accent);
    overflow-wrap: anywhere;
  }

  .facts,
  .status {
    margin: var(--skald-space-1) 0 0;
    overflow-wrap: anywhere;
  }

  .status[data-status='ready'] {
    color: var(--skald-ok);
  }

  .status[data-status='no_text'] {
    color: var(--skald-warn);
  }

  .status[data-status='failed'] {
    color: var(--skald-error);
  }

  .hit {
    display: flex;
    flex-direction: column;
    gap: 0.15rem;
    color: inherit;
    text-decoration: none;
    border-radius: var(--skald-radius);
    padding: var(--skald-space-1);
  }

  .hit:hover {
    background: var(--skald-hover);
  }

  .hit-title {
    font-weight: 600;
    color: var(--skald-accent);
    text-decoration: underline;
    overflow-wrap: anywhere;
  }

  .snippet {
    font-size: 0.9rem;
    color: var(--skald-text-muted);
    overflow-wrap: anywhere;
  }

  mark {
    background: var(--skald-warn-bg);
    color: var(--skald-text);
    font-weight: 600;
  }

  .block h3 {
    margin: 0 0 var(--skald-space-1);
    font-size: 1.1rem;
  }
`;
