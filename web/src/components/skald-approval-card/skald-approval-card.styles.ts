/** Styles for `<skald-approval-card>` and `<skald-question-card>`. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
    margin: var(--skald-space-2) 0;
  }

  .card {
    padding: var(--skald-space-3);
    border: 1px solid var(--skald-warn);
    border-left-width: 0.3rem;
    border-radius: var(--skald-radius);
    background: var(--skald-surface);
  }

  header {
    display: flex;
    justify-content: space-between;
    gap: var(--skald-space-2);
    font-size: 0.8rem;
    text-transform: uppercase;
    letter-spacing: 0.05em;
    color: var(--skald-warn);
    font-weight: 700;
  }

  .context {
    text-transform: none;
    letter-spacing: normal;
    font-weight: 400;
    color: var(--skald-text-muted);
  }

  h3 {
    margin: var(--skald-space-1) 0;
    font-size: 1.05rem;
  }

  .summary {
    margin: 0 0 var(--skald-space-2);
    overflow-wrap: anywhere;
  }

  .for {
    color: var(--skald-text-muted);
  }

  .why {
    margin: 0 0 var(--skald-space-2);
    padding-left: var(--skald-space-2);
    border-left: 0.2rem solid var(--skald-border);
    color: var(--skald-text-muted);
    white-space: pre-wrap;
  }

  .heading {
    margin: 0 0 var(--skald-space-1);
    font-weight: 600;
    font-size: 0.85rem;
  }

  .exact {
    margin: var(--skald-space-2) 0;
  }

  .exact summary {
    cursor: pointer;
    font-size: 0.9rem;
    color: var(--skald-text-muted);
  }

  .exact[open] summary {
    margin-bottom: var(--skald-space-2);
  }

  .args {
    margin: 0 0 var(--skald-space-2);
    padding: var(--skald-space-2);
    max-height: 20rem;
    overflow: auto;
    border-radius: 0.25rem;
    background: var(--skald-code-bg);
    white-space: pre-wrap;
    overflow-wrap: anywhere;
    font-size: 0.85rem;
  }

  .meta {
    display: flex;
    flex-wrap: wrap;
    gap: var(--skald-space-1) var(--skald-space-3);
    margin: 0 0 var(--skald-space-2);
    font-size: 0.8rem;
    color: var(--skald-text-muted);
  }

  .hint {
    margin-bottom: var(--skald-space-2);
  }

  /* Who decides a card its role sends to the supervisor (§6.2). */
  .waiting {
    font-weight: 600;
  }

  /* A card decided: how, in the header's place of what it asks. */
  .kind.decided {
    color: var(--skald-text-muted);
  }

  /* A remember card: one labelled line each, labels in a column of their own. */
  .memory {
    display: grid;
    grid-template-columns: max-content 1fr;
    gap: var(--skald-space-1) var(--skald-space-3);
    margin: 0 0 var(--skald-space-2);
  }

  .memory .line {
    display: contents;
  }

  .memory dt {
    font-weight: 600;
  }

  .memory dd {
    margin: 0;
    min-width: 0;
    overflow-wrap: anywhere;
  }

  .memory .sentence {
    font-weight: 600;
  }

  /* A schedule card's next times, one a line. */
  .times {
    list-style: none;
    margin: 0;
    padding: 0;
  }

  /* A tool server's request for a model's answer: its messages, in order. */
  .messages {
    list-style: none;
    margin: 0 0 var(--skald-space-2);
    padding: 0;
    max-height: 16rem;
    overflow-y: auto;
  }

  .similar ul {
    list-style: none;
    margin: 0 0 var(--skald-space-2);
    padding: 0;
  }

  .similar li {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    justify-content: space-between;
    gap: var(--skald-space-1) var(--skald-space-2);
    padding: var(--skald-space-1) var(--skald-space-2);
    border-left: 0.2rem solid var(--skald-border);
    overflow-wrap: anywhere;
  }

  @media (max-width: 30rem) {
    .memory {
      grid-template-columns: 1fr;
      gap: 0;
    }

    .memory dd {
      margin-bottom: var(--skald-space-1);
    }
  }

  .question-card {
    border-color: var(--skald-accent);
  }

  .question-card header {
    color: var(--skald-accent);
  }

  .question {
    margin: var(--skald-space-1) 0 var(--skald-space-2);
    font-size: 1.05rem;
    white-space: pre-wrap;
  }

  .suggestions {
    display: flex;
    flex-wrap: wrap;
    gap: var(--skald-space-2);
    margin-bottom: var(--skald-space-2);
  }

  .suggestions button {
    border-radius: 999px;
    min-height: 2.25rem;
  }

  .answer {
    display: flex;
    gap: var(--skald-space-2);
  }

  .answer input {
    flex: 1;
    min-width: 0;
  }

  .form-card {
    border-color: var(--skald-accent);
  }

  .form-card header {
    color: var(--skald-accent);
  }

  .fields {
    display: flex;
    flex-direction: column;
    gap: var(--skald-space-2);
  }

  .field {
    display: flex;
    flex-direction: column;
    gap: var(--skald-space-1);
  }

  .field.checkbox {
    flex-direction: row;
    flex-wrap: wrap;
    align-items: center;
  }

  .field input:not([type='checkbox']),
  .field select {
    min-width: 0;
    max-width: 100%;
  }
`;
