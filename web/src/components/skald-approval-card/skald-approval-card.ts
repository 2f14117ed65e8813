/**
 * An approval card (§8.4): the assistant wants to use a tool that needs the
 * person's yes. Shows what, for whom, why, and the exact arguments the
 * decision binds (by their hash, which is sent back with the decision, so a
 * card that changed since it was shown is refused rather than approved).
 * "Always allow" is offered only where the person's role may approve.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, query } from 'lit/decorators.js';

import type { ApprovalCard } from '../../api/types.js';
import { strings, toolLabel } from '../../i18n/en.js';
import { describeCall } from '../../i18n/tool-sentences.js';
import { controls } from '../../styles/controls.js';
import { DecideEvent } from '../events.js';
import type { SkaldConfirm } from '../skald-confirm/skald-confirm.js';
import '../skald-confirm/skald-confirm.js';
import { styles } from './skald-approval-card.styles.js';

/**
 * Test hooks: `[data-testid=allow]`, `[data-testid=deny]`,
 * `[data-testid=always]`, `[data-testid=card-arguments]`.
 *
 * @summary An approval card with the exact arguments and Allow / Deny / Always allow.
 * @fires skald-decide - the person decided
 */
@customElement('skald-approval-card')
export class SkaldApprovalCard extends LitElement {
  static override styles = [controls, styles];

  @property({ attribute: false }) card: ApprovalCard | null = null;
  /** The person's role may approve (and so may "always allow"). */
  @property({ type: Boolean }) mayApprove = false;
  /** The decision is on its way. */
  @property({ type: Boolean }) busy = false;
  /** Why the last decision failed, if it did. */
  @property() error = '';
  /** Show which conversation it belongs to (in the inbox). */
  @property() context = '';

  @query('skald-confirm') private confirm?: SkaldConfirm;

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
    const details = card.details;
    const label = toolLabel(details.tool);
    // A tool the page knows reads as a sentence, with the exact arguments one click away;
    // any other shows them as they are.
    const sentence = describeCall(details.tool, details.arguments);
    const exact = html`<pre class="args" data-testid="card-arguments" aria-labelledby="args-label" tabindex="0">${prettyArguments(details.arguments)}</pre>
      <p class="meta">
        ${details.reason ? html`<span>${details.reason}</span>` : nothing}
        <span title=${details.arguments_hash}>${strings.approvalFingerprint.replace('{hash}', details.arguments_hash.slice(0, 12))}</span>
      </p>`;
    return html`
      <section class="card" aria-labelledby="title" aria-describedby="what" tabindex="-1">
        <header>
          <span class="kind">${strings.approvalKind}</span>
          ${this.context ? html`<span class="context">${this.context}</span>` : nothing}
        </header>
        <h3 id="title">${strings.approvalTitle.replace('{tool}', label)}</h3>
        <p id="what" class="summary" data-testid="card-sentence">
          ${sentence ?? card.summary}
          ${details.for ? html`<span class="for">· ${strings.approvalFor.replace('{name}', details.for.name)}</span>` : nothing}
        </p>
        ${details.why ? html`<blockquote class="why"><span class="visually-hidden">${strings.approvalWhy}</span>${details.why}</blockquote>` : nothing}
        ${sentence === null
          ? html`<p class="heading" id="args-label">${strings.approvalArguments}</p>
              ${exact}`
          : html`<details class="exact">
              <summary id="args-label">${strings.approvalExact}</summary>
              ${exact}
            </details>`}
        ${this.error ? html`<p class="notice error" role="alert">${this.error}</p>` : nothing}
        ${this.mayApprove ? nothing : html`<p class="hint">${strings.approvalMayNotApprove}</p>`}
        <div class="actions">
          ${this.mayApprove
            ? html`<button type="button" class="primary" data-testid="allow" ?disabled=${this.busy} @click=${() => this.#decide('allow', false)}>
                ${strings.allow}
              </button>`
            : nothing}
          <button type="button" data-testid="deny" ?disabled=${this.busy} @click=${() => this.#decide('deny', false)}>${strings.deny}</button>
          ${this.mayApprove
            ? html`<button
                type="button"
                class="quiet"
                data-testid="always"
                ?disabled=${this.busy}
                title=${strings.alwaysAllowTitle.replace('{tool}', details.tool)}
                @click=${() => void this.#alwaysAllow(label)}
              >
                ${strings.alwaysAllow}
              </button>`
            : nothing}
        </div>
      </section>
      <skald-confirm></skald-confirm>
    `;
  }

  /**
   * "Always allow" is asked again first: it lets the tool run unasked from now on, for this
   * person, until they take it back on My data.
   */
  async #alwaysAllow(label: string): Promise<void> {
    const confirmed = await this.confirm?.ask({
      title: strings.alwaysAllowConfirmTitle.replace('{tool}', label),
      body: strings.alwaysAllowConfirmBody.replace('{tool}', label),
      action: strings.alwaysAllow,
    });
    if (confirmed) this.#decide('allow', true);
  }

  #decide(decision: 'allow' | 'deny', always: boolean): void {
    if (this.card === null || this.busy) return;
    this.dispatchEvent(new DecideEvent(this.card, decision, always));
  }
}

/** Arguments as indented JSON; text that is no JSON is shown as it is. */
export function prettyArguments(value: unknown): string {
  let parsed = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value) as unknown;
    } catch {
      return value;
    }
  }
  return JSON.stringify(parsed, null, 2) ?? String(value);
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-approval-card': SkaldApprovalCard;
  }
}
