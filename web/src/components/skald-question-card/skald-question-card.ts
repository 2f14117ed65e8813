/**
 * A question the assistant asked (`clarify`, §8.5), answerable inline: one
 * of its suggestions with a click, or in the person's own words.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';

import type { QuestionCard } from '../../api/types.js';
import { strings } from '../../i18n/en.js';
import { controls } from '../../styles/controls.js';
import { styles } from '../skald-approval-card/skald-approval-card.styles.js';
import { AnswerEvent } from '../events.js';

/**
 * Test hooks: `[data-testid=suggestion]`, `[data-testid=answer-field]`,
 * `[data-testid=answer]`.
 *
 * @summary A question with suggestions and a free answer.
 * @fires skald-answer - the person answered
 */
@customElement('skald-question-card')
export class SkaldQuestionCard extends LitElement {
  static override styles = [controls, styles];

  @property({ attribute: false }) card: QuestionCard | null = null;
  @property({ type: Boolean }) busy = false;
  @property() error = '';
  @property() context = '';

  @state() private draft = '';

  /**
   * Takes the focus on the card itself, not on a button: a key pressed as the card
   * appears (an Enter meant for the message field) must never decide it. Tab goes on to
   * what it shows, then to its buttons.
   */
  override focus(options?: FocusOptions): void {
    void this.updateComplete.then(() => this.renderRoot.querySelector<HTMLElement>('section.card')?.focus(options));
  }

  override render(): TemplateResult | typeof nothing {
    const card = this.card;
    if (card === null) return nothing;
    const suggestions = card.details.suggestions ?? [];
    return html`
      <section class="card question-card" aria-labelledby="question" tabindex="-1">
        <header>
          <span class="kind">${strings.questionKind}</span>
          ${this.context ? html`<span class="context">${this.context}</span>` : nothing}
        </header>
        <p class="question" id="question">${card.details.question}</p>
        ${suggestions.length > 0
          ? html`<div class="suggestions" role="group" aria-label=${strings.questionSuggestions}>
              ${suggestions.map(
                (text) => html`<button type="button" data-testid="suggestion" ?disabled=${this.busy} @click=${() => this.#answer(text)}>
                  ${text}
                </button>`,
              )}
            </div>`
          : nothing}
        ${this.error ? html`<p class="notice error" role="alert">${this.error}</p>` : nothing}
        <form class="answer" @submit=${this.#submit}>
          <label class="visually-hidden" for="answer">${strings.questionAnswerLabel}</label>
          <input
            id="answer"
            data-testid="answer-field"
            placeholder=${strings.questionPlaceholder}
            .value=${this.draft}
            @input=${(e: Event) => (this.draft = (e.target as HTMLInputElement).value)}
          />
          <button type="submit" class="primary" data-testid="answer" ?disabled=${this.busy || this.draft.trim() === ''}>
            ${strings.questionSend}
          </button>
        </form>
      </section>
    `;
  }

  #submit(event: Event): void {
    event.preventDefault();
    this.#answer(this.draft.trim());
  }

  #answer(text: string): void {
    if (this.card === null || this.busy || text === '') return;
    this.dispatchEvent(new AnswerEvent(this.card, text));
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-question-card': SkaldQuestionCard;
  }
}
