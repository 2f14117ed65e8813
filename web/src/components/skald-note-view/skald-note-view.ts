/**
 * One note: read (its text as sanitized Markdown, like the assistant's
 * replies) or written (title and text). A note written while a web page was
 * in the conversation says so, since its words may come from that page.
 */
import { LitElement, html, nothing, type PropertyValues, type TemplateResult } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';

import type { Note } from '../../api/types.js';
import { strings } from '../../i18n/en.js';
import { formatTime } from '../../i18n/format.js';
import { controls, page } from '../../styles/controls.js';
import { pencilIcon, trashIcon } from '../icons.js';
import '../skald-markdown/skald-markdown.js';
import { styles } from './skald-note-view.styles.js';

/** The person saved the note (a new one when the view has none). */
export class SaveNoteEvent extends Event {
  static readonly type = 'skald-save-note';
  constructor(
    readonly title: string,
    readonly body: string,
  ) {
    super(SaveNoteEvent.type, { bubbles: true, composed: true });
  }
}

const MAX_TITLE = 200;

/**
 * Test hooks: `[data-testid=note-title]`, `[data-testid=note-body]`,
 * `note-edit`, `note-delete`, `note-back`; while writing, the fields
 * `#note-title-field` and `#note-body-field`, and `note-save`.
 *
 * @summary A note, to read or to write.
 * @fires skald-save-note - save, with the title and text
 * @fires skald-note-edit - start editing
 * @fires skald-note-cancel - stop editing, or close the note
 * @fires skald-note-delete - delete it (the page asks first)
 */
@customElement('skald-note-view')
export class SkaldNoteView extends LitElement {
  static override styles = [controls, page, styles];

  /** The note, or `null` while writing a new one. */
  @property({ attribute: false }) note: Note | null = null;
  @property({ type: Boolean }) editing = false;
  @property({ type: Boolean }) busy = false;

  @state() private draftTitle = '';
  @state() private draftBody = '';
  @state() private problem = '';

  @query('#note-title-field') private titleField?: HTMLInputElement;
  @query('h3') private heading?: HTMLElement;

  override focus(): void {
    if (this.editing) this.titleField?.focus();
    else this.heading?.focus();
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if ((changed.has('editing') || changed.has('note')) && this.editing) {
      this.draftTitle = this.note?.title ?? '';
      this.draftBody = this.note?.body ?? '';
      this.problem = '';
    }
  }

  protected override updated(changed: PropertyValues<this>): void {
    if (changed.has('editing') && this.editing) this.titleField?.focus();
  }

  override render(): TemplateResult {
    return this.editing ? this.#renderEditor() : this.#renderNote();
  }

  #renderNote(): TemplateResult {
    const note = this.note;
    if (note === null) return html``;
    return html`<article class="note" aria-labelledby="note-heading">
      <button type="button" class="link back" data-testid="note-back" @click=${this.#cancel}>${strings.notesBack}</button>
      <h3 id="note-heading" tabindex="-1" data-testid="note-title">${note.title}</h3>
      <p class="muted small">
        ${strings.noteUpdated.replace('{time}', formatTime(note.updated_at))}
        ${note.created_at !== note.updated_at ? html` · ${strings.noteCreated.replace('{time}', formatTime(note.created_at))}` : nothing}
      </p>
      ${note.outside ? html`<p class="notice warn">${strings.noteOutside}</p>` : nothing}
      <div class="body" data-testid="note-body">
        ${note.body.trim() === '' ? html`<p class="muted">${strings.noteEmptyBody}</p>` : html`<skald-markdown .text=${note.body}></skald-markdown>`}
      </div>
      <div class="actions">
        <button type="button" data-testid="note-edit" ?disabled=${this.busy} @click=${() => this.dispatchEvent(new Event('skald-note-edit', { bubbles: true, composed: true }))}>
          ${pencilIcon}${strings.edit}
        </button>
        <button type="button" class="danger" data-testid="note-delete" ?disabled=${this.busy} @click=${() => this.dispatchEvent(new Event('skald-note-delete', { bubbles: true, composed: true }))}>
          ${trashIcon}${strings.delete}
        </button>
      </div>
    </article>`;
  }

  #renderEditor(): TemplateResult {
    const isNew = this.note === null;
    return html`<form class="editor" data-testid="note-form" @submit=${this.#submit} novalidate aria-labelledby="editor-heading">
      <h3 id="editor-heading">${isNew ? strings.newNote : strings.editNote}</h3>
      ${this.problem ? html`<p class="notice error" role="alert">${this.problem}</p>` : nothing}
      <div class="field">
        <label for="note-title-field">${strings.noteTitleLabel}</label>
        <input
          id="note-title-field"
          maxlength=${MAX_TITLE}
          .value=${this.draftTitle}
          @input=${(e: Event) => (this.draftTitle = (e.target as HTMLInputElement).value)}
        />
      </div>
      <div class="field">
        <label for="note-body-field">${strings.noteBodyLabel}</label>
        <textarea
          id="note-body-field"
          rows="14"
          aria-describedby="body-hint"
          .value=${this.draftBody}
          @input=${(e: Event) => (this.draftBody = (e.target as HTMLTextAreaElement).value)}
        ></textarea>
        <p class="hint" id="body-hint">${strings.noteBodyHint}</p>
      </div>
      <div class="actions">
        <button type="submit" class="primary" data-testid="note-save" ?disabled=${this.busy}>${this.busy ? strings.saving : strings.save}</button>
        <button type="button" @click=${this.#cancel}>${strings.cancel}</button>
      </div>
    </form>`;
  }

  #submit(event: Event): void {
    event.preventDefault();
    if (this.draftTitle.trim() === '') {
      this.problem = strings.noteNeedsTitle;
      this.titleField?.focus();
      return;
    }
    this.problem = '';
    this.dispatchEvent(new SaveNoteEvent(this.draftTitle.trim(), this.draftBody));
  }

  #cancel(): void {
    this.dispatchEvent(new Event('skald-note-cancel', { bubbles: true, composed: true }));
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-note-view': SkaldNoteView;
  }
  interface HTMLElementEventMap {
    [SaveNoteEvent.type]: SaveNoteEvent;
  }
}
