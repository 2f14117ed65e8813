/**
 * The recovery code, shown once: at setup, enrolment, after a recovery and after the
 * space's key was replaced (§6.2).
 * It is the only way back into a person's space without their password, so
 * the screen says so plainly, offers copy and print, and asks the person to
 * confirm they kept it before going on. The code is never stored by the page.
 */
import { LitElement, html, type TemplateResult } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';

import { ClipboardController } from '../../controllers/clipboard-controller.js';
import { strings } from '../../i18n/en.js';
import { controls, screen } from '../../styles/controls.js';
import { styles } from './skald-recovery-code.styles.js';

/** The person confirmed they kept their recovery code. */
export class RecoveryCodeKeptEvent extends Event {
  static readonly type = 'skald-recovery-code-kept';
  constructor() {
    super(RecoveryCodeKeptEvent.type, { bubbles: true, composed: true });
  }
}

/**
 * @summary Shows a recovery code once, with copy, print and a plain warning.
 * @fires skald-recovery-code-kept - the person confirmed they kept the code
 */
@customElement('skald-recovery-code')
export class SkaldRecoveryCode extends LitElement {
  static override styles = [controls, screen, styles];

  @property() code = '';
  /** Whose code it is, printed with it. */
  @property() name = '';
  /** `setup`, `enrol`, `recover` or `rotate` (a new key): the heading differs a little. */
  @property() reason: 'setup' | 'enrol' | 'recover' | 'rotate' = 'enrol';

  @state() private kept = false;

  readonly #clipboard = new ClipboardController(this);

  /** The screen replaced another: the focus starts at its title, read out first. */
  protected override firstUpdated(): void {
    this.renderRoot.querySelector<HTMLElement>('#title')?.focus();
  }

  override render(): TemplateResult {
    const copied = this.#clipboard.copied !== null;
    return html`
      <div class="screen">
        <section class="panel wide" aria-labelledby="title">
          <p class="brand">${strings.productName}</p>
          <h1 id="title" tabindex="-1">${this.#title()}</h1>
          ${this.reason === 'rotate' ? html`<p class="lead" data-testid="new-key-done">${strings.recoveryRotated}</p>` : ''}
          <p class="lead">${strings.recoveryLead.replace('{name}', this.name)}</p>
          <p class="code" data-testid="recovery-code" aria-label=${strings.recoveryCodeLabel}>${this.code}</p>
          <div class="actions no-print">
            <button type="button" @click=${this.#copy}>${copied ? strings.copied : strings.copy}</button>
            <button type="button" @click=${() => window.print()}>${strings.print}</button>
            <span class="visually-hidden" role="status">${copied ? strings.copiedCode : ''}</span>
          </div>
          <div class="notice warn warning" role="note">
            <p><strong>${strings.recoveryWarningTitle}</strong> ${strings.recoveryWarning}</p>
          </div>
          ${this.reason === 'recover' || this.reason === 'rotate'
            ? html`<p class="hint" data-testid="recovery-replaced">${strings.recoveryReplaced}</p>`
            : ''}
          <div class="confirm no-print">
            <input
              id="kept"
              type="checkbox"
              .checked=${this.kept}
              @change=${(e: Event) => (this.kept = (e.target as HTMLInputElement).checked)}
              @keydown=${this.#enterTicks}
            />
            <label for="kept">${strings.recoveryKept}</label>
          </div>
          <div class="actions no-print">
            <button type="button" class="primary" ?disabled=${!this.kept} @click=${this.#continue}>
              ${strings.continue}
            </button>
          </div>
        </section>
      </div>
    `;
  }

  #title(): string {
    switch (this.reason) {
      case 'recover':
        return strings.recoveryNewTitle;
      case 'rotate':
        return strings.recoveryRotatedTitle;
      default:
        return strings.recoveryTitle;
    }
  }

  /** Enter ticks the box as Space does: people expect it of the one box on the screen. */
  #enterTicks(event: KeyboardEvent): void {
    if (event.key !== 'Enter') return;
    event.preventDefault();
    this.kept = !this.kept;
  }

  #copy(): void {
    void this.#clipboard.copy(this.code);
  }

  #continue(): void {
    if (this.kept) this.dispatchEvent(new RecoveryCodeKeptEvent());
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-recovery-code': SkaldRecoveryCode;
  }
  interface HTMLElementEventMap {
    [RecoveryCodeKeptEvent.type]: RecoveryCodeKeptEvent;
  }
}
