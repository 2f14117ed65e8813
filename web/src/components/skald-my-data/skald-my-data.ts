/**
 * My data: everything in the person's space as a readable archive, and
 * deleting the account — which destroys the encrypted file — after the
 * password and the person's own name, typed.
 *
 * Owns: the export download (fetched with the bearer in a header, handed
 * to the browser as an in-memory object URL that is revoked soon after)
 * and the account deletion call. Never: keeps the archive or the password.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';

import { ApiError } from '../../api/client.js';
import { strings } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import type { Login } from '../../state/login.js';
import { controls, page, pageHost } from '../../styles/controls.js';
import { AccountDeletedEvent } from '../events.js';
import { boxIcon, trashIcon } from '../icons.js';
import { styles } from './skald-my-data.styles.js';

/** The download has the blob's bytes by then; the URL is released after it. */
const REVOKE_MS = 1_000;

/**
 * Test hooks: `[data-testid=export]`, `[data-testid=export-done]`,
 * `#delete-password`, `#delete-confirm`, `[data-testid=delete-account]`,
 * `[data-testid=delete-error]`.
 *
 * @summary Export my space; delete my account.
 * @fires skald-account-deleted - the account and its file are gone
 */
@customElement('skald-my-data')
export class SkaldMyData extends LitElement {
  static override styles = [controls, pageHost, page, styles];

  @property({ attribute: false }) login: Login | null = null;

  @state() private exporting = false;
  @state() private exported = '';
  @state() private exportError = '';
  @state() private password = '';
  @state() private typedName = '';
  @state() private deleting = false;
  @state() private deleteError = '';

  override render(): TemplateResult {
    const name = this.login?.me.user.name ?? '';
    const ready = this.password !== '' && this.typedName === name && name !== '';
    return html`
      <header class="bar"><h2>${strings.dataTitle}</h2></header>
      <div class="scroll">
        <div class="column">
          <p class="lead">${strings.dataLead}</p>
          <section class="block" aria-labelledby="export-title">
            <h3 id="export-title">${strings.exportTitle}</h3>
            <p>${strings.exportLead}</p>
            <ul class="contents">
              <li>${strings.exportConversations}</li>
              <li>${strings.exportNotes}</li>
              <li>${strings.exportSettings}</li>
            </ul>
            <p class="muted small">${strings.exportCare}</p>
            ${this.exportError ? html`<p class="notice error" role="alert">${this.exportError}</p>` : nothing}
            <div aria-live="polite">
              ${this.exported ? html`<p class="notice ok" data-testid="export-done">${this.exported}</p>` : nothing}
            </div>
            <button type="button" class="primary" data-testid="export" ?disabled=${this.exporting} @click=${() => void this.#export()}>
              ${boxIcon}${this.exporting ? strings.exporting : strings.exportButton}
            </button>
          </section>

          <section class="block danger-zone" aria-labelledby="delete-title">
            <h3 id="delete-title">${strings.deleteAccountTitle}</h3>
            <p>${strings.deleteAccountLead}</p>
            <p class="notice warn">${strings.deleteAccountWarning}</p>
            <form @submit=${this.#delete} novalidate>
              ${this.deleteError ? html`<p class="notice error" role="alert" data-testid="delete-error">${this.deleteError}</p>` : nothing}
              <div class="grid-fields">
                <div class="field">
                  <label for="delete-password">${strings.password}</label>
                  <input id="delete-password" type="password" autocomplete="current-password" .value=${this.password}
                    @input=${(e: Event) => (this.password = (e.target as HTMLInputElement).value)} />
                </div>
                <div class="field">
                  <label for="delete-confirm">${strings.confirmType.replace('{name}', name)}</label>
                  <input id="delete-confirm" autocomplete="off" spellcheck="false" .value=${this.typedName}
                    @input=${(e: Event) => (this.typedName = (e.target as HTMLInputElement).value)} />
                </div>
              </div>
              <button type="submit" class="danger" data-testid="delete-account" ?disabled=${!ready || this.deleting}>
                ${trashIcon}${this.deleting ? strings.working : strings.deleteAccountButton}
              </button>
            </form>
          </section>
        </div>
      </div>
    `;
  }

  #url: string | null = null;
  #revokeTimer: ReturnType<typeof setTimeout> | undefined;

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#revoke();
  }

  /** Releases the last archive's blob URL, if any. */
  #revoke(): void {
    clearTimeout(this.#revokeTimer);
    if (this.#url !== null) URL.revokeObjectURL(this.#url);
    this.#url = null;
  }

  async #export(): Promise<void> {
    const client = this.login?.client;
    if (!client || this.exporting) return;
    this.exporting = true;
    this.exported = '';
    this.exportError = '';
    try {
      const { blob, filename } = await client.exportArchive();
      this.#revoke();
      const url = URL.createObjectURL(blob);
      const link = document.createElement('a');
      link.href = url;
      link.download = filename;
      link.rel = 'noopener';
      link.hidden = true;
      this.renderRoot.append(link);
      link.click();
      link.remove();
      this.#url = url;
      this.#revokeTimer = setTimeout(() => this.#revoke(), REVOKE_MS);
      this.exported = strings.exportDone.replace('{file}', filename).replace('{size}', formatSize(blob.size));
    } catch (error) {
      this.exportError = describeError(error);
    } finally {
      this.exporting = false;
    }
  }

  async #delete(event: Event): Promise<void> {
    event.preventDefault();
    const login = this.login;
    if (!login || this.deleting || this.password === '' || this.typedName !== login.me.user.name) return;
    this.deleting = true;
    this.deleteError = '';
    // The server closes this login's socket as it deletes: the picker should say why.
    login.farewell = strings.accountDeletedNotice;
    try {
      await login.client.deleteAccount(this.password, this.typedName);
      this.password = '';
      this.dispatchEvent(new AccountDeletedEvent());
    } catch (error) {
      login.farewell = null;
      this.password = '';
      this.deleteError =
        error instanceof ApiError && error.code === 'invalid_credentials' ? strings.currentPasswordWrong : describeError(error);
    } finally {
      this.deleting = false;
    }
  }
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return strings.sizeBytes.replace('{n}', String(bytes));
  if (bytes < 1024 * 1024) return strings.sizeKib.replace('{n}', (bytes / 1024).toFixed(1));
  return strings.sizeMib.replace('{n}', (bytes / 1024 / 1024).toFixed(1));
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-my-data': SkaldMyData;
  }
}
