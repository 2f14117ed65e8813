/**
 * The inbox (§8.5): everything waiting on the person, oldest first, each
 * decidable or answerable right here, with a way to its conversation; and
 * above them, the notices (§3) of what someone else changed.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property } from 'lit/decorators.js';

import type { Card, Conversation, Model } from '../../api/types.js';
import { CardActionsController } from '../../controllers/card-actions-controller.js';
import { StoreController } from '../../controllers/store-controller.js';
import { strings } from '../../i18n/en.js';
import type { Login } from '../../state/login.js';
import { formatTime } from '../../i18n/format.js';
import { supervisorDecides } from '../../state/supervision.js';
import { controls } from '../../styles/controls.js';
import { OpenSessionEvent } from '../events.js';
import '../skald-approval-card/skald-approval-card.js';
import '../skald-notice-list/skald-notice-list.js';
import '../skald-question-card/skald-question-card.js';
import '../skald-form-card/skald-form-card.js';
import '../skald-sample-card/skald-sample-card.js';
import { styles } from './skald-inbox.styles.js';

/**
 * Test hook: `[data-testid=inbox-item]` per card.
 *
 * @summary What waits on the person.
 * @fires skald-open-session - open the conversation a card belongs to
 */
@customElement('skald-inbox')
export class SkaldInbox extends LitElement {
  static override styles = [controls, styles];

  @property({ attribute: false }) login: Login | null = null;
  /** For the conversations' titles. */
  @property({ attribute: false }) sessions: readonly Conversation[] = [];
  /** The models the person may use, to name the providers notices mention. */
  @property({ attribute: false }) models: readonly Model[] = [];
  /** The person's supervisors by name, whom a card their role sends on waits for (§6.2). */
  @property({ attribute: false }) supervisors: readonly string[] = [];

  readonly #cards = new CardActionsController(
    this,
    () => this.login?.client ?? null,
    () => this.login?.inbox ?? null,
  );

  constructor() {
    super();
    new StoreController(this, () => this.login?.inbox);
    new StoreController(this, () => this.login?.notices);
  }

  override render(): TemplateResult {
    const inbox = this.login?.inbox;
    const cards = inbox?.cards ?? [];
    const notices = this.login?.notices.notices ?? [];
    return html`
      <header class="bar">
        <h2 id="inbox-title">${strings.inboxTitle}</h2>
      </header>
      <div class="scroll">
        <div class="column">
          ${inbox && !inbox.loaded ? html`<p class="hint" role="status">${strings.loading}</p>` : nothing}
          <skald-notice-list .login=${this.login} .models=${this.models}></skald-notice-list>
          ${inbox?.loaded && cards.length === 0 && notices.length === 0
            ? html`<div class="empty" data-testid="inbox-empty">
                <h3>${strings.inboxEmptyTitle}</h3>
                <p>${strings.inboxEmpty}</p>
              </div>`
            : nothing}
          <ul class="cards" aria-labelledby="inbox-title">
            ${cards.map((card) => html`<li data-testid="inbox-item">${this.#renderCard(card)}</li>`)}
          </ul>
        </div>
      </div>
    `;
  }

  #renderCard(card: Card): TemplateResult {
    const session = this.sessions.find((s) => s.id === card.session_id);
    const context = strings.inboxIn.replace('{title}', session?.title || strings.untitled);
    const busy = this.#cards.busy(card.id);
    const error = this.#cards.error(card.id);
    return html`
      ${card.kind === 'approval'
        ? html`<skald-approval-card
            .card=${card}
            .context=${context}
            ?mayApprove=${this.login?.me.role?.may_approve ?? false}
            .supervisors=${supervisorDecides(card, this.login?.me.role ?? null) ? this.supervisors : null}
            ?busy=${busy}
            .error=${error}
          ></skald-approval-card>`
        : card.kind === 'form'
          ? html`<skald-form-card .card=${card} .context=${context} ?busy=${busy} .error=${error}></skald-form-card>`
          : card.kind === 'sample'
            ? html`<skald-sample-card .card=${card} .context=${context} ?busy=${busy} .error=${error}></skald-sample-card>`
            : html`<skald-question-card .card=${card} .context=${context} ?busy=${busy} .error=${error}></skald-question-card>`}
      <p class="open">
        <button type="button" class="link" @click=${() => this.dispatchEvent(new OpenSessionEvent(card.session_id))}>
          ${strings.inboxOpen}
        </button>
        <span class="hint">${formatTime(card.created_at)}</span>
      </p>
    `;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-inbox': SkaldInbox;
  }
}
