/**
 * A tool server's request for a model's answer while its call runs (MCP sampling,
 * §12.1): exactly what the server would have the model read — its instructions and
 * messages, nothing of the conversation — which model would answer and where that model
 * is, and how long an answer it wants. Allowed, the person's own model answers and the
 * answer goes back to the server; denied, the server is told so.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property } from 'lit/decorators.js';

import type { SampleCard } from '../../api/types.js';
import { strings } from '../../i18n/en.js';
import { controls } from '../../styles/controls.js';
import { styles } from '../skald-approval-card/skald-approval-card.styles.js';
import { DecideEvent } from '../events.js';

/**
 * Test hooks: `[data-testid=sample-system]`, `[data-testid=sample-message]` (each, its
 * `data-role` `user` or `assistant`), `[data-testid=sample-model]`, `[data-testid=allow]`,
 * `[data-testid=deny]`.
 *
 * @summary A tool server's request for a model's answer, allowed or denied.
 * @fires skald-decide - the person decided (never "always")
 */
@customElement('skald-sample-card')
export class SkaldSampleCard extends LitElement {
  static override styles = [controls, styles];

  @property({ attribute: false }) card: SampleCard | null = null;
  @property({ type: Boolean }) busy = false;
  @property() error = '';
  @property() context = '';

  /** The focus goes to the card, never to a button: a key meant elsewhere must not decide it. */
  override focus(options?: FocusOptions): void {
    void this.updateComplete.then(() => this.renderRoot.querySelector<HTMLElement>('section.card')?.focus(options));
  }

  override render(): TemplateResult | typeof nothing {
    const card = this.card;
    if (card === null) return nothing;
    const details = card.details;
    const where = details.privacy === 'remote' ? strings.toolServerRemote : strings.toolServerLocal;
    return html`
      <section class="card sample-card" aria-labelledby="sample-title" aria-describedby="sample-what" tabindex="-1">
        <header>
          <span class="kind">${strings.formKind.replace('{server}', details.server)}</span>
          ${this.context ? html`<span class="context">${this.context}</span>` : nothing}
        </header>
        <h3 id="sample-title">${strings.sampleTitle.replace('{server}', details.server)}</h3>
        <p id="sample-what" class="summary" data-testid="sample-model">
          ${strings.sampleModel.replace('{model}', details.model)} · ${where}
          ${details.for ? html`<span class="for">· ${strings.approvalFor.replace('{name}', details.for.name)}</span>` : nothing}
        </p>
        ${details.system
          ? html`<p class="heading">${strings.sampleSystem}</p>
              <blockquote class="why" data-testid="sample-system">${details.system}</blockquote>`
          : nothing}
        <p class="heading" id="sample-messages">${strings.sampleMessages}</p>
        <ol class="messages" aria-labelledby="sample-messages">
          ${details.messages.map(
            (message) => html`<li data-testid="sample-message" data-role=${message.role}>
              <span class="hint">${message.role === 'assistant' ? strings.sampleAsModel : strings.sampleAsPerson}</span>
              <blockquote class="why">${message.text}</blockquote>
            </li>`,
          )}
        </ol>
        <p class="meta">
          <span>${strings.sampleLength.replace('{tokens}', String(details.max_tokens))}</span>
          ${details.hints.length > 0 ? html`<span>${strings.sampleHints.replace('{models}', details.hints.join(', '))}</span>` : nothing}
        </p>
        <p class="hint">${strings.samplePrivate.replaceAll('{server}', details.server)}</p>
        ${this.error ? html`<p class="notice error" role="alert">${this.error}</p>` : nothing}
        <div class="actions">
          <button type="button" class="primary" data-testid="allow" ?disabled=${this.busy} @click=${() => this.#decide('allow')}>
            ${strings.sampleAllow}
          </button>
          <button type="button" data-testid="deny" ?disabled=${this.busy} @click=${() => this.#decide('deny')}>${strings.deny}</button>
        </div>
      </section>
    `;
  }

  #decide(decision: 'allow' | 'deny'): void {
    if (this.card === null || this.busy) return;
    this.dispatchEvent(new DecideEvent(this.card, decision, false));
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-sample-card': SkaldSampleCard;
  }
}
