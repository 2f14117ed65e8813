/**
 * Changing one's password (§4): the current one, then the new one twice,
 * with the strength hint. Only the key's wrapping changes: the
 * conversations stay as they are, under the new password.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';

import { ApiError, type ApiClient } from '../../api/client.js';
import { strings } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import { judgePassword } from '../../state/password.js';
import { controls, page } from '../../styles/controls.js';
import '../skald-password-hint/skald-password-hint.js';
import { styles } from './skald-change-password.styles.js';

/**
 * Test hooks: `#current-password`, `#new-password`, `#confirm-password`,
 * `[data-testid=password-changed]`, `[data-testid=password-error]`.
 *
 * @summary The change-password form.
 */
@customElement('skald-change-password')
export class SkaldChangePassword extends LitElement {
  static override styles = [controls, page, styles];

  @property({ attribute: false }) client: ApiClient | null = null;
  /** The person's name, which the new password should not contain. */
  @property() name = '';

  @state() private current = '';
  @state() private next = '';
  @state() private confirm = '';
  @state() private busy = false;
  @state() private error = '';
  @state() private done = false;

  override render(): TemplateResult {
    const mismatch = this.confirm !== '' && this.confirm !== this.next;
    return html`<form @submit=${this.#submit} novalidate aria-labelledby="password-title">
      <h3 id="password-title">${strings.passwordChangeTitle}</h3>
      <p class="muted">${strings.passwordChangeLead}</p>
      ${this.error ? html`<p class="notice error" role="alert" data-testid="password-error">${this.error}</p>` : nothing}
      ${this.done ? html`<p class="notice ok" role="status" data-testid="password-changed">${strings.passwordChanged}</p>` : nothing}
      <div class="field">
        <label for="current-password">${strings.currentPassword}</label>
        <input id="current-password" type="password" autocomplete="current-password" .value=${this.current}
          @input=${(e: Event) => (this.current = (e.target as HTMLInputElement).value)} />
      </div>
      <div class="grid-fields">
        <div class="field">
          <label for="new-password">${strings.newPasswordLabel}</label>
          <input id="new-password" type="password" autocomplete="new-password" aria-describedby="new-password-hint" .value=${this.next}
            @input=${(e: Event) => (this.next = (e.target as HTMLInputElement).value)} />
        </div>
        <div class="field">
          <label for="confirm-password">${strings.confirmPassword}</label>
          <input id="confirm-password" type="password" autocomplete="new-password" aria-invalid=${mismatch ? 'true' : 'false'}
            aria-describedby=${mismatch ? 'mismatch' : nothing} .value=${this.confirm}
            @input=${(e: Event) => (this.confirm = (e.target as HTMLInputElement).value)} />
          ${mismatch ? html`<p class="hint error-text" id="mismatch">${strings.passwordsDiffer}</p>` : nothing}
        </div>
      </div>
      <skald-password-hint id="new-password-hint" .password=${this.next} .name=${this.name}></skald-password-hint>
      <div class="actions">
        <button type="submit" class="primary" ?disabled=${this.busy}>${this.busy ? strings.working : strings.passwordChangeSubmit}</button>
      </div>
    </form>`;
  }

  async #submit(event: Event): Promise<void> {
    event.preventDefault();
    if (this.client === null || this.busy) return;
    this.done = false;
    if (this.current === '' || this.next === '' || this.confirm === '') {
      this.error = strings.fillEverything;
      return;
    }
    if (this.next !== this.confirm) {
      this.error = strings.passwordsDiffer;
      return;
    }
    if (!judgePassword(this.next, this.name).ok) {
      this.error = strings.passwordTooWeak;
      return;
    }
    this.busy = true;
    this.error = '';
    try {
      await this.client.changePassword(this.current, this.next);
      this.current = '';
      this.next = '';
      this.confirm = '';
      this.done = true;
    } catch (error) {
      this.error = error instanceof ApiError && error.code === 'invalid_credentials' ? strings.currentPasswordWrong : describeError(error);
    } finally {
      this.busy = false;
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-change-password': SkaldChangePassword;
  }
}
