/**
 * Asks before something that cannot be undone: a modal dialog with Cancel
 * (focused first) and the action. For the gravest deletions the person
 * types a name first, so a stray Enter never destroys anything.
 *
 *   if (await this.confirm.ask({ title, body, action: strings.delete, typed: person.name })) …
 */
import { LitElement, html, nothing, type PropertyValues, type TemplateResult } from 'lit';
import { customElement, query, state } from 'lit/decorators.js';

import { strings } from '../../i18n/en.js';
import { controls } from '../../styles/controls.js';
import { styles } from './skald-confirm.styles.js';

export interface ConfirmRequest {
  readonly title: string;
  readonly body: string;
  /** The action's button label. */
  readonly action: string;
  /** When set, the action waits until exactly this is typed. */
  readonly typed?: string;
}

/**
 * Test hooks: `[data-testid=confirm-typed]`, `[data-testid=confirm-ok]`.
 *
 * @summary A confirmation dialog, optionally with a typed confirmation.
 */
@customElement('skald-confirm')
export class SkaldConfirm extends LitElement {
  static override styles = [controls, styles];

  @state() private request: ConfirmRequest | null = null;
  @state() private typed = '';

  @query('dialog') private dialog?: HTMLDialogElement;
  @query('#typed') private typedField?: HTMLInputElement;

  #resolve: ((confirmed: boolean) => void) | null = null;

  /** Shows the dialog; resolves `true` when the person confirms. */
  ask(request: ConfirmRequest): Promise<boolean> {
    this.#resolve?.(false);
    this.typed = '';
    this.request = request;
    return new Promise((resolve) => {
      this.#resolve = resolve;
    });
  }

  protected override updated(changed: PropertyValues): void {
    if (changed.has('request') && this.request !== null && this.dialog && !this.dialog.open) {
      this.dialog.showModal();
      if (this.request.typed !== undefined) this.typedField?.focus();
    }
  }

  override render(): TemplateResult {
    const request = this.request;
    const ready = request !== null && (request.typed === undefined || this.typed === request.typed);
    return html`<dialog aria-labelledby="confirm-title" aria-describedby="confirm-body" @close=${() => this.#settle(false)}>
      ${request
        ? html`<form method="dialog" @submit=${this.#submit}>
            <h2 id="confirm-title">${request.title}</h2>
            <p id="confirm-body">${request.body}</p>
            ${request.typed !== undefined
              ? html`<div class="field">
                  <label for="typed">${strings.confirmType.replace('{name}', request.typed)}</label>
                  <input
                    id="typed"
                    data-testid="confirm-typed"
                    autocomplete="off"
                    spellcheck="false"
                    .value=${this.typed}
                    @input=${(e: Event) => (this.typed = (e.target as HTMLInputElement).value)}
                  />
                </div>`
              : nothing}
            <div class="actions end">
              <button type="button" ?autofocus=${request.typed === undefined} @click=${() => this.#close(false)}>${strings.cancel}</button>
              <button type="submit" class="danger" data-testid="confirm-ok" ?disabled=${!ready}>${request.action}</button>
            </div>
          </form>`
        : nothing}
    </dialog>`;
  }

  #submit(event: Event): void {
    event.preventDefault();
    const request = this.request;
    if (request === null || (request.typed !== undefined && this.typed !== request.typed)) return;
    this.#close(true);
  }

  #close(confirmed: boolean): void {
    this.#settle(confirmed);
    this.dialog?.close();
  }

  #settle(confirmed: boolean): void {
    const resolve = this.#resolve;
    this.#resolve = null;
    this.request = null;
    this.typed = '';
    resolve?.(confirmed);
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-confirm': SkaldConfirm;
  }
}
