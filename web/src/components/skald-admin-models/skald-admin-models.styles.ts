/** Styles for `<skald-admin-models>`. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
  }

  .provider-list {
    list-style: none;
    margin: 0;
    padding: 0;
  }

  .row-head h3 {
    margin: 0;
    font-size: 1.1rem;
  }

  dl.facts {
    margin: var(--skald-space-2) 0;
  }

  .model {
    font-family: var(--skald-font-mono);
    font-size: 0.9em;
  }

  /* One model a line: its id and strength, then whether it reads pictures. */
  .provider-models {
    list-style: none;
    margin: 0 0 var(--skald-space-1);
    padding: 0;
  }

  .provider-models li {
    display: flex;
    flex-wrap: wrap;
    align-items: baseline;
    justify-content: space-between;
    gap: 0 var(--skald-space-3);
    padding: var(--skald-space-1) 0;
  }

  .provider-models li + li {
    border-top: 1px solid var(--skald-border);
  }

  .provider-models .check {
    align-items: center;
    margin: 0;
  }

  .provider-models .check input {
    margin-top: 0;
  }

  [data-testid='local-crash'] > * + * {
    margin-top: var(--skald-space-2);
  }

  [data-testid='local-crash'] pre {
    margin: var(--skald-space-1) 0 0;
    max-height: 12rem;
    overflow: auto;
    white-space: pre-wrap;
    overflow-wrap: anywhere;
    font-family: var(--skald-font-mono);
    color: var(--skald-text);
  }

  .trust {
    margin-top: var(--skald-space-2);
  }

  .key {
    display: flex;
    flex-wrap: wrap;
    align-items: flex-end;
    gap: 0 var(--skald-space-2);
    margin-top: var(--skald-space-3);
  }

  .key .field {
    flex: 1 1 16rem;
  }

  .key .actions {
    margin-bottom: calc(var(--skald-space-3) + 1.4rem);
  }

  /* What the provider writes speech down and reads aloud with: its two forms, grouped. */
  fieldset.voice {
    margin: var(--skald-space-3) 0 0;
    padding: var(--skald-space-2) var(--skald-space-3) 0;
    border: 1px solid var(--skald-border);
    border-radius: var(--skald-radius);
    min-width: 0;
  }

  fieldset.voice legend {
    font-weight: 600;
    padding: 0 var(--skald-space-1);
  }

  fieldset.voice > .hint + .hint {
    margin-top: var(--skald-space-1);
  }

  fieldset.voice form {
    margin-top: var(--skald-space-3);
  }

  fieldset.voice .grid-fields {
    align-items: start;
  }

  fieldset.voice .field {
    margin-bottom: var(--skald-space-2);
  }

  fieldset.voice .actions {
    margin-bottom: var(--skald-space-3);
  }

  .danger-text {
    color: var(--skald-error);
  }

  skald-connect-model {
    display: block;
  }

  .local-list {
    margin-bottom: var(--skald-space-3);
  }

  .local-list dl.facts {
    margin-top: var(--skald-space-2);
  }

  p.line {
    margin: 0 0 var(--skald-space-1);
  }

  skald-local-catalogue {
    display: block;
    margin-top: var(--skald-space-3);
  }

  skald-admin-voice {
    display: block;
  }
`;
