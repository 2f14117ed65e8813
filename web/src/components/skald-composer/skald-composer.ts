/**
 * Where the person writes. Enter sends, Shift+Enter starts a new line; the
 * field grows with the text. While a reply is being written the Send button
 * becomes Stop (Escape stops too). What goes with the message (skald-attachments) sits
 * in the same box, at the start of the row. While the message waits for something (a file
 * attached still being read), Send is off and a line under the field says why.
 */
import { LitElement, html, nothing, type PropertyValues, type TemplateResult } from 'lit';
import { customElement, property, query } from 'lit/decorators.js';

import { strings } from '../../i18n/en.js';
import { controls } from '../../styles/controls.js';
import { styles } from './skald-composer.styles.js';

/** The person sends a message. */
export class SendEvent extends Event {
  static readonly type = 'skald-send';
  constructor(readonly text: string) {
    super(SendEvent.type, { bubbles: true, composed: true });
  }
}

/** The person stops the reply being written. */
export class StopEvent extends Event {
  static readonly type = 'skald-stop';
  constructor() {
    super(StopEvent.type, { bubbles: true, composed: true });
  }
}

/**
 * Test hooks: `[data-testid=composer]` (the text field), `[data-testid=send]`,
 * `[data-testid=stop]`, `[data-testid=send-waits]` (why Send is off, while `waiting`).
 *
 * @slot attachments - what goes with the message, laid out in the box's wrapping row before the field
 * @summary The message field with Send and Stop.
 * @fires skald-send - the person sends the text
 * @fires skald-stop - the person stops the reply
 */
@customElement('skald-composer')
export class SkaldComposer extends LitElement {
  static override styles = [controls, styles];

  /** A reply is being written: offer Stop instead of Send. */
  @property({ type: Boolean }) busy = false;
  /** Sending is not possible now (no model, stopping…). */
  @property({ type: Boolean }) disabled = false;
  /** Why sending waits, in words (a file attached still being read); `''` when it does not. */
  @property() waiting = '';
  @property() placeholder = '';
  /** The text in the field; set it to put text back (a refused message). */
  @property() value = '';

  @query('textarea') private field?: HTMLTextAreaElement;

  override focus(): void {
    this.field?.focus();
  }

  protected override updated(changed: PropertyValues<this>): void {
    if (changed.has('value')) this.#resize();
  }

  override render(): TemplateResult {
    return html`
      <form class="composer" @submit=${this.#submit}>
        <slot name="attachments"></slot>
        <label class="visually-hidden" for="message">${strings.composerLabel}</label>
        <textarea
          id="message"
          data-testid="composer"
          rows="1"
          placeholder=${this.placeholder || strings.composerPlaceholder}
          aria-describedby="keys"
          .value=${this.value}
          @input=${this.#input}
          @keydown=${this.#keydown}
        ></textarea>
        <span class="visually-hidden" id="keys">${strings.composerKeys}</span>
        ${this.busy
          ? html`<button type="button" class="stop" data-testid="stop" @click=${this.#stop} aria-label=${strings.stopLabel}>
              <span class="square" aria-hidden="true"></span>${strings.stop}
            </button>`
          : html`<button
              type="submit"
              class="primary send"
              data-testid="send"
              ?disabled=${this.disabled || this.waiting !== '' || this.value.trim() === ''}
              aria-label=${strings.sendLabel}
              aria-describedby=${this.waiting !== '' ? 'waiting' : nothing}
            >
              ${strings.send}
            </button>`}
      </form>
      ${this.waiting !== '' ? html`<p class="waiting" id="waiting" data-testid="send-waits">${this.waiting}</p>` : nothing}
    `;
  }

  #input(event: Event): void {
    this.value = (event.target as HTMLTextAreaElement).value;
    this.#resize();
  }

  #resize(): void {
    const field = this.field;
    if (!field) return;
    field.style.height = 'auto';
    field.style.height = `${Math.min(field.scrollHeight, 320)}px`;
  }

  #keydown(event: KeyboardEvent): void {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      this.#send();
    } else if (event.key === 'Escape' && this.busy) {
      event.preventDefault();
      this.#stop();
    }
  }

  #submit(event: Event): void {
    event.preventDefault();
    this.#send();
  }

  #send(): void {
    const text = this.value.trim();
    if (text === '' || this.busy || this.disabled || this.waiting !== '') return;
    this.value = '';
    this.dispatchEvent(new SendEvent(text));
  }

  #stop(): void {
    this.dispatchEvent(new StopEvent());
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-composer': SkaldComposer;
  }
  interface HTMLElementEventMap {
    [SendEvent.type]: SendEvent;
    [StopEvent.type]: StopEvent;
  }
}
