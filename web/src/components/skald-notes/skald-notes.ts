/**
 * The person's notes (§12): the same notes the assistant keeps with its
 * `note_*` tools, in the person's encrypted file. List (newest first),
 * full-text search with the matching words marked, view, write, edit and
 * delete. A wide window shows the list beside the open note; a narrow one
 * shows one at a time.
 *
 * Owns: the calls to `/api/notes`. Never: keeps a note after the page
 * leaves, nor puts one in the address bar.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';

import { ApiError } from '../../api/client.js';
import type { Note, NoteHit, NoteSummary } from '../../api/types.js';
import { ResourceController } from '../../controllers/resource-controller.js';
import { strings } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import { formatNumber, formatTime } from '../../i18n/format.js';
import { plural } from '../../i18n/locale.js';
import { DebouncedSearch } from '../../state/debounced-search.js';
import type { Login } from '../../state/login.js';
import { snippetParts } from '../../state/notes.js';
import { controls, page, pageHost } from '../../styles/controls.js';
import { plusIcon } from '../icons.js';
import type { SkaldConfirm } from '../skald-confirm/skald-confirm.js';
import '../skald-confirm/skald-confirm.js';
import type { SaveNoteEvent } from '../skald-note-view/skald-note-view.js';
import '../skald-note-view/skald-note-view.js';
import { styles } from './skald-notes.styles.js';

/** What the right-hand side shows. */
type Open =
  | { readonly kind: 'none' }
  | { readonly kind: 'loading'; readonly id: number }
  | { readonly kind: 'note'; readonly note: Note; readonly editing: boolean }
  | { readonly kind: 'new' };

const SEARCH_DELAY_MS = 250;

/**
 * Test hooks: `[data-testid=new-note]`, `[data-testid=notes-search]`,
 * `[data-testid=note-item]` (its `data-id`), `[data-testid=notes-empty]`.
 *
 * @summary The notes page: list, search, view, write, edit, delete.
 */
@customElement('skald-notes')
export class SkaldNotes extends LitElement {
  static override styles = [controls, pageHost, page, styles];

  @property({ attribute: false }) login: Login | null = null;

  @state() private query = '';
  @state() private hits: readonly NoteHit[] | null = null;
  @state() private open: Open = { kind: 'none' };
  @state() private busy = false;
  @state() private error = '';
  @state() private announcement = '';

  @query('skald-confirm') private confirm?: SkaldConfirm;

  readonly #list = new ResourceController<readonly NoteSummary[]>(this, (signal) => this.#client().notes(signal));
  readonly #search = new DebouncedSearch<readonly NoteHit[]>({
    delayMs: SEARCH_DELAY_MS,
    run: (query) => this.#client().searchNotes(query),
    onResults: (hits) => {
      this.hits = hits;
      if (hits !== null) this.announcement = plural(hits.length, strings.notesFound).replace('{n}', formatNumber(hits.length));
    },
    onError: (error) => (this.error = describeError(error)),
  });

  #client() {
    const client = this.login?.client;
    if (!client) throw new ApiError('network', 'not logged in', 0);
    return client;
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#search.cancel();
  }

  async #openNote(id: number): Promise<void> {
    this.error = '';
    this.open = { kind: 'loading', id };
    try {
      const note = await this.#client().note(id);
      if (this.open.kind === 'loading' && this.open.id === id) this.open = { kind: 'note', note, editing: false };
    } catch (error) {
      this.open = { kind: 'none' };
      this.error = describeError(error);
    }
    void this.updateComplete.then(() => this.renderRoot.querySelector('skald-note-view')?.focus());
  }

  async #save(event: SaveNoteEvent): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    this.error = '';
    const open = this.open;
    try {
      const note =
        open.kind === 'note'
          ? await this.#client().updateNote(open.note.id, { title: event.title, body: event.body })
          : await this.#client().createNote(event.title, event.body);
      this.open = { kind: 'note', note, editing: false };
      this.announcement = strings.noteSaved;
      await this.#refresh();
      void this.updateComplete.then(() => this.renderRoot.querySelector('skald-note-view')?.focus());
    } catch (error) {
      this.error = describeError(error);
    } finally {
      this.busy = false;
    }
  }

  async #delete(note: Note): Promise<void> {
    const confirmed = await this.confirm?.ask({
      title: strings.noteDeleteTitle,
      body: strings.noteDeleteBody.replace('{title}', note.title),
      action: strings.delete,
    });
    if (!confirmed) return;
    this.busy = true;
    this.error = '';
    try {
      await this.#client().deleteNote(note.id);
      this.open = { kind: 'none' };
      this.announcement = strings.noteDeleted;
      await this.#refresh();
      // The note that had focus is gone: focus goes to the list's heading.
      await this.updateComplete;
      this.renderRoot.querySelector<HTMLElement>('#notes-title')?.focus();
    } catch (error) {
      this.error = describeError(error);
    } finally {
      this.busy = false;
    }
  }

  async #refresh(): Promise<void> {
    await this.#list.reload();
    await this.#search.refresh();
  }

  override render(): TemplateResult {
    const open = this.open;
    const showing = open.kind !== 'none';
    return html`
      <header class="bar">
        <h2 id="notes-title" tabindex="-1">${strings.notesTitle}</h2>
        <button type="button" class="primary" data-testid="new-note" @click=${() => (this.open = { kind: 'new' })}>
          ${plusIcon}${strings.newNote}
        </button>
      </header>
      <div class="split" data-showing=${showing ? 'note' : 'list'}>
        <section class="list-pane" aria-labelledby="notes-title">
          <div class="search">
            <label class="visually-hidden" for="notes-search">${strings.notesSearchLabel}</label>
            <input
              id="notes-search"
              type="search"
              data-testid="notes-search"
              placeholder=${strings.notesSearchPlaceholder}
              .value=${this.query}
              @input=${(e: Event) => {
                this.query = (e.target as HTMLInputElement).value;
                this.#search.input(this.query);
              }}
            />
          </div>
          ${this.#list.status()} ${this.#renderList()}
        </section>
        <section class="note-pane" aria-label=${strings.noteLabel}>
          ${this.error ? html`<p class="notice error" role="alert" data-testid="notes-error">${this.error}</p>` : nothing}
          ${this.#renderOpen()}
        </section>
      </div>
      <p class="visually-hidden" role="status" aria-live="polite">${this.announcement}</p>
      <skald-confirm></skald-confirm>
    `;
  }

  #renderList(): TemplateResult | typeof nothing {
    const selected = this.open.kind === 'note' ? this.open.note.id : this.open.kind === 'loading' ? this.open.id : null;
    if (this.hits !== null) {
      if (this.hits.length === 0) return html`<p class="hint pad">${strings.notesNoMatch}</p>`;
      return html`<ul class="items">
        ${this.hits.map(
          (hit) => html`<li>
            <button
              type="button"
              class="item"
              data-testid="note-item"
              data-id=${hit.id}
              aria-current=${hit.id === selected ? 'true' : nothing}
              @click=${() => void this.#openNote(hit.id)}
            >
              <span class="item-title">${hit.title}</span>
              <span class="item-snippet">${snippetParts(hit.snippet).map((part) => (part.match ? html`<mark>${part.text}</mark>` : part.text))}</span>
            </button>
          </li>`,
        )}
      </ul>`;
    }
    const notes = this.#list.value;
    if (notes === undefined) return nothing;
    if (notes.length === 0) {
      return html`<div class="pad" data-testid="notes-empty">
        <p><strong>${strings.notesEmptyTitle}</strong></p>
        <p class="hint">${strings.notesEmpty}</p>
      </div>`;
    }
    return html`<ul class="items">
      ${notes.map(
        (note) => html`<li>
          <button
            type="button"
            class="item"
            data-testid="note-item"
            data-id=${note.id}
            aria-current=${note.id === selected ? 'true' : nothing}
            @click=${() => void this.#openNote(note.id)}
          >
            <span class="item-title">${note.title}</span>
            <span class="item-meta">
              ${formatTime(note.updated_at)} · ${plural(note.chars, strings.noteChars).replace('{n}', formatNumber(note.chars))}
              ${note.outside ? html`<span class="tag remote">${strings.noteOutsideTag}</span>` : nothing}
            </span>
          </button>
        </li>`,
      )}
    </ul>`;
  }

  #renderOpen(): TemplateResult {
    const open = this.open;
    switch (open.kind) {
      case 'none':
        return html`<div class="empty">
          <h3>${strings.noteNoneTitle}</h3>
          <p>${strings.noteNone}</p>
        </div>`;
      case 'loading':
        return html`<p class="hint" role="status">${strings.loading}</p>`;
      case 'new':
        return html`<skald-note-view
          .note=${null}
          editing
          ?busy=${this.busy}
          @skald-save-note=${(e: SaveNoteEvent) => void this.#save(e)}
          @skald-note-cancel=${() => (this.open = { kind: 'none' })}
        ></skald-note-view>`;
      case 'note':
        return html`<skald-note-view
          .note=${open.note}
          ?editing=${open.editing}
          ?busy=${this.busy}
          @skald-save-note=${(e: SaveNoteEvent) => void this.#save(e)}
          @skald-note-edit=${() => (this.open = { ...open, editing: true })}
          @skald-note-cancel=${() => (this.open = open.editing ? { ...open, editing: false } : { kind: 'none' })}
          @skald-note-delete=${() => void this.#delete(open.note)}
        ></skald-note-view>`;
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-notes': SkaldNotes;
  }
}
