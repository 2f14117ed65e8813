/**
 * A message of the conversation, edited in place to be sent again as another version of
 * its turn. Ctrl+Enter (⌘+Enter) or Send sends; Escape or Cancel puts it back unchanged.
 * What was there stays on the server, on its own path.
 */
import { LitElement, html, type TemplateResult } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';

import { strings } from '../../i18n/en.js';
import { controls } from '../../styles/controls.js';
import { styles } from './skald-message-edit.styles.js';

/** The person sends their edited message. */
export class ResendEvent extends Event {
  static readonly type = 'skald-resend';
  constructor(readonly text: string) {
    super(ResendEvent.type, { bubbles: true, composed: true });
  }
}

/** The person leaves the message as it was. */
export class EditCancelEvent extends Event {
  static readonly type = 'skald-edit-cancel';
  constructor() {
    super(EditCancelEvent.type, { bubbles: true, composed: true });
  }
}

/**
 * Test hooks: `[data-testid=edit-field]`, `[data-testid=edit-send]`, `[data-testid=edit-cancel]`.
 *
 * @summary A message edited in place, to send again.
 * @fires skald-resend - the person sends the edited text
 * @fires skald-edit-cancel - the person leaves it as it was
 */
@customElement('skald-message-edit')
export class SkaldMessageEdit extends LitElement {
  static override styles = [controls, styles];

  /** The message as it was sent. */
  @property() text = '';

  @state() private draft = '';
  @query('textarea') private field?: HTMLTextAreaElement;

  override connectedCallback(): void {
    super.connectedCallback();
    this.draft = this.text;
  }

  protected override firstUpdated(): void {
    const field = this.field;
    if (!field) return;
    field.focus();
    field.setSelectionRange(field.value.length, field.value.length);
    this.#resize();
  }

  override render(): TemplateResult {
    const unchanged = this.draft.trim() === '' || this.draft.trim() === this.text.trim();
    return html`<form class="edit" @submit=${this.#submit}>
      <label class="visually-hidden" for="edit">${strings.editLabel}</label>
      <textarea
        id="edit"
        data-testid="edit-field"
        rows="2"
        aria-describedby="edit-hint"
        .value=${this.draft}
        @input=${this.#input}
        @keydown=${this.#keydown}
      ></textarea>
      <p class="hint" id="edit-hint">${strings.editHint}</p>
      <div class="actions">
        <button type="button" data-testid="edit-cancel" @click=${this.#cancel}>${strings.cancel}</button>
        <button type="submit" class="primary" data-testid="edit-send" ?disabled=${unchanged}>${strings.send}</button>
      </div>
    </form>`;
  }

  #input(event: Event): void {
    this.draft = (event.target as HTMLTextAreaElement).value;
    this.#resize();
  }

  #keydown(event: KeyboardEvent): void {
    if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation(); // Escape here leaves the edit, not the reply being written
      this.#cancel();
    } else if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      this.#send();
    }
  }

  #submit(event: Event): void {
    event.preventDefault();
    this.#send();
  }

  #send(): void {
    const text = this.draft.trim();
    if (text === '' || text === this.text.trim()) return;
    this.dispatchEvent(new ResendEvent(text));
  }

  #cancel(): void {
    this.dispatchEvent(new EditCancelEvent());
  }

  #resize(): void {
    const field = this.field;
    if (!field) return;
    field.style.height = 'auto';
    field.style.height = `${Math.min(field.scrollHeight, 320)}px`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-message-edit': SkaldMessageEdit;
  }
}
