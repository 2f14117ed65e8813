/**
 * The first run (§1): create the administrator, show their recovery code
 * once, connect a model. Three steps, numbered on screen.
 *
 * Owns: the setup call and, for the last step, the new administrator's
 * session client. Fires `skald-signed-in` at the end, so the app takes the
 * administrator straight into Skald.
 */
import { LitElement, html, nothing, type PropertyValues, type TemplateResult } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';

import type { ApiClient } from '../../api/client.js';
import type { Unlocked } from '../../api/types.js';
import { strings } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import { controls, screen } from '../../styles/controls.js';
import { SignedInEvent } from '../events.js';
import '../skald-connect-model/skald-connect-model.js';
import '../skald-password-hint/skald-password-hint.js';
import '../skald-recovery-code/skald-recovery-code.js';
import { styles } from './skald-setup.styles.js';

type Step =
  | { readonly kind: 'account' }
  | { readonly kind: 'code'; readonly unlocked: Unlocked }
  | { readonly kind: 'model'; readonly unlocked: Unlocked; readonly session: ApiClient };

/**
 * Test hooks: `[data-testid=setup-form]` (fields `name`, `password`,
 * `confirm`), then `<skald-recovery-code>`, then `<skald-connect-model>`.
 *
 * @summary The setup wizard: administrator, recovery code, model.
 * @fires skald-signed-in - setup is done and the administrator is logged in
 */
@customElement('skald-setup')
export class SkaldSetup extends LitElement {
  static override styles = [controls, screen, styles];

  /** The launch-token client. */
  @property({ attribute: false }) client: ApiClient | null = null;

  @state() private step: Step = { kind: 'account' };
  @state() private name = '';
  @state() private password = '';
  @state() private confirm = '';
  @state() private error = '';
  @state() private busy = false;

  @query('[data-autofocus]') private autofocusTarget?: HTMLElement;

  protected override firstUpdated(): void {
    this.autofocusTarget?.focus();
  }

  protected override updated(changed: PropertyValues): void {
    if (changed.has('step')) this.autofocusTarget?.focus();
  }

  override render(): TemplateResult {
    const step = this.step;
    switch (step.kind) {
      case 'account':
        return this.#renderAccount();
      case 'code':
        return html`<skald-recovery-code
          reason="setup"
          .code=${step.unlocked.recovery_code ?? ''}
          .name=${step.unlocked.user.name}
          @skald-recovery-code-kept=${() => this.#toModel(step.unlocked)}
        ></skald-recovery-code>`;
      case 'model':
        return html`<div class="screen">
          <section class="panel wide" aria-labelledby="title">
            ${this.#steps(3)}
            <h1 id="title" tabindex="-1" data-autofocus>${strings.setupModelTitle}</h1>
            <p class="lead">${strings.setupModelLead}</p>
            <skald-connect-model
              .client=${step.session}
              @skald-model-step-done=${() => this.dispatchEvent(new SignedInEvent(step.unlocked))}
            ></skald-connect-model>
          </section>
        </div>`;
    }
  }

  #steps(current: number): TemplateResult {
    const labels = [strings.setupStepAccount, strings.setupStepCode, strings.setupStepModel];
    return html`<ol class="steps" aria-label=${strings.setupStepsLabel}>
      ${labels.map(
        (label, i) => html`<li aria-current=${i + 1 === current ? 'step' : nothing} class=${i + 1 < current ? 'done' : ''}>
          <span class="number" aria-hidden="true">${i + 1}</span>${label}
        </li>`,
      )}
    </ol>`;
  }

  #renderAccount(): TemplateResult {
    const mismatch = this.confirm !== '' && this.confirm !== this.password;
    return html`
      <div class="screen">
        <section class="panel wide" aria-labelledby="title">
          <p class="brand">${strings.productName}</p>
          ${this.#steps(1)}
          <h1 id="title">${strings.setupTitle}</h1>
          <p class="lead">${strings.setupLead}</p>
          <form data-testid="setup-form" @submit=${this.#submit} novalidate>
            ${this.error ? html`<p class="notice error" role="alert" data-testid="setup-error">${this.error}</p>` : nothing}
            <div class="field">
              <label for="name">${strings.yourName}</label>
              <input
                id="name"
                name="name"
                autocomplete="username"
                data-autofocus
                aria-describedby="name-hint"
                .value=${this.name}
                @input=${(e: Event) => (this.name = (e.target as HTMLInputElement).value)}
              />
              <p class="hint" id="name-hint">${strings.setupNameHint}</p>
            </div>
            <div class="field">
              <label for="password">${strings.newPassword}</label>
              <input
                id="password"
                name="password"
                type="password"
                autocomplete="new-password"
                aria-describedby="password-hint"
                .value=${this.password}
                @input=${(e: Event) => (this.password = (e.target as HTMLInputElement).value)}
              />
              <skald-password-hint id="password-hint" .password=${this.password} .name=${this.name}></skald-password-hint>
            </div>
            <div class="field">
              <label for="confirm">${strings.confirmPassword}</label>
              <input
                id="confirm"
                name="confirm"
                type="password"
                autocomplete="new-password"
                aria-invalid=${mismatch ? 'true' : 'false'}
                aria-describedby="confirm-hint"
                .value=${this.confirm}
                @input=${(e: Event) => (this.confirm = (e.target as HTMLInputElement).value)}
              />
              <p class="hint" id="confirm-hint">${mismatch ? strings.passwordsDiffer : ''}</p>
            </div>
            <div class="notice warn" role="note"><p>${strings.setupAdminNote}</p></div>
            <div class="actions">
              <button type="submit" class="primary" ?disabled=${this.busy}>
                ${this.busy ? strings.working : strings.setupSubmit}
              </button>
            </div>
          </form>
        </section>
      </div>
    `;
  }

  async #submit(event: Event): Promise<void> {
    event.preventDefault();
    if (this.client === null || this.busy) return;
    if (this.name.trim() === '' || this.password === '') {
      this.error = strings.fillEverything;
      return;
    }
    if (this.password !== this.confirm) {
      this.error = strings.passwordsDiffer;
      return;
    }
    this.busy = true;
    this.error = '';
    try {
      const unlocked = await this.client.setup(this.name.trim(), this.password);
      this.password = '';
      this.confirm = '';
      this.step = { kind: 'code', unlocked };
    } catch (error) {
      this.error = describeError(error);
    } finally {
      this.busy = false;
    }
  }

  #toModel(unlocked: Unlocked): void {
    if (this.client === null) return;
    this.step = { kind: 'model', unlocked, session: this.client.withToken(unlocked.token) };
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-setup': SkaldSetup;
  }
}
