/**
 * The Files page: documents uploaded for the person alone or for everyone (the shared
 * pool, which every member and the administrator can read), each listed with its kind,
 * size, pages, date and how reading it went; full-text search over their pages; upload
 * by the button or by dropping files anywhere on the page, with progress; delete; and
 * one document open in skald-document-view.
 *
 * Addresses (state/route.ts): `#/files` is the list; `#/files/<document id>` opens a
 * document; `#/files/<document id>?page=<n>` opens it at page n (counted from 1) — what a
 * search hit, and a citation in a reply, link to.
 *
 * Owns: the calls to `/api/documents`, the uploads under way, and asking again every
 * second after a document still being read (`reading`) until its status changes or the
 * page leaves. Never: keeps a document or its bytes once the page leaves, nor puts a
 * file's name into the address bar.
 */
import { LitElement, html, nothing, type PropertyValues, type TemplateResult } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';

import { ApiError, isCancelled } from '../../api/client.js';
import type { Document as StoredDocument, DocumentHit, DocumentPool } from '../../api/types.js';
import { ResourceController } from '../../controllers/resource-controller.js';
import { strings } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import { formatNumber, formatTime } from '../../i18n/format.js';
import { plural } from '../../i18n/locale.js';
import { DebouncedSearch } from '../../state/debounced-search.js';
import {
  kindLabel,
  MAX_DOCUMENT_BYTES,
  statusAnnouncement,
  statusSentence,
  uploadFailure,
  uploadPercent,
  uploadRefusal,
} from '../../state/documents.js';
import { formatBytes } from '../../state/local-models.js';
import type { Login } from '../../state/login.js';
import { snippetParts } from '../../state/notes.js';
import { documentLink, routeHash } from '../../state/route.js';
import { controls, page, pageHost } from '../../styles/controls.js';
import { dropOverlayStyles } from '../../styles/drop-overlay.js';
import { dropOverlay } from '../drop-overlay.js';
import { closeIcon, trashIcon, uploadIcon } from '../icons.js';
import type { SkaldConfirm } from '../skald-confirm/skald-confirm.js';
import '../skald-confirm/skald-confirm.js';
import type { SkaldDocumentView } from '../skald-document-view/skald-document-view.js';
import '../skald-document-view/skald-document-view.js';
import { styles } from './skald-files.styles.js';

/** One file on its way up, or refused. */
interface Upload {
  readonly key: number;
  readonly file: File;
  readonly pool: DocumentPool;
  readonly state: 'waiting' | 'sending' | 'failed';
  readonly sent: number;
  readonly problem: string;
}

/** The document open in the viewer, as last read. */
type Open =
  | { readonly kind: 'none' }
  | { readonly kind: 'loading'; readonly id: string }
  | { readonly kind: 'document'; readonly document: StoredDocument }
  | { readonly kind: 'gone'; readonly id: string; readonly problem: string };

const SEARCH_DELAY_MS = 250;
/** How often a document still being read is asked after. */
const POLL_MS = 1000;

/**
 * Test hooks: `[data-testid=files-upload]` (the button), `files-input` (its file field),
 * `files-pool-private`, `files-pool-shared`, `files-drop` (the page; `data-dragging` while
 * files are dragged over it), `upload` (each upload under way or refused: `data-state`,
 * with `upload-problem` and `upload-dismiss`), `files-search`, `file` (each document:
 * `data-id`, `data-status`, `data-pool`, with `file-open`, `file-status`, `file-shared`,
 * `file-delete`), `file-hit` (each search hit: `data-id`, `data-page`), `files-empty`,
 * `files-no-match`, `files-error`; the open document is `skald-document-view`, or
 * `document-gone`.
 *
 * @summary The Files page: upload, list, search, open and delete documents.
 */
@customElement('skald-files')
export class SkaldFiles extends LitElement {
  static override styles = [controls, pageHost, page, dropOverlayStyles, styles];

  @property({ attribute: false }) login: Login | null = null;
  /** The document the address opens, or `null` for the list. */
  @property({ attribute: false }) documentId: string | null = null;
  /** The page of it the address names, counted from 1. */
  @property({ type: Number }) documentPage = 1;

  @state() private pool: DocumentPool = 'private';
  @state() private uploads: readonly Upload[] = [];
  @state() private dragging = false;
  @state() private query = '';
  @state() private hits: readonly DocumentHit[] | null = null;
  @state() private open: Open = { kind: 'none' };
  @state() private error = '';
  @state() private announcement = '';

  @query('skald-confirm') private confirm?: SkaldConfirm;
  @query('#files-input') private input?: HTMLInputElement;

  readonly #list = new ResourceController<readonly StoredDocument[]>(this, async (signal) => {
    const documents = await this.#client().documents(signal);
    this.#pollSoon();
    return documents;
  });
  readonly #search = new DebouncedSearch<readonly DocumentHit[]>({
    delayMs: SEARCH_DELAY_MS,
    run: (query) => this.#client().searchDocuments(query),
    onResults: (hits) => {
      this.hits = hits;
      if (hits !== null) this.announcement = plural(hits.length, strings.filesFound).replace('{n}', formatNumber(hits.length));
    },
    onError: (error) => (this.error = describeError(error)),
  });

  #uploadKey = 0;
  #uploading = false;
  /** How deep the drag is in the page: `dragleave` fires for every element it leaves, not only the page. */
  #dragDepth = 0;
  #poll: ReturnType<typeof setTimeout> | undefined;
  #alive = new AbortController();

  #client() {
    const client = this.login?.client;
    if (!client) throw new ApiError('network', 'not logged in', 0);
    return client;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.#alive = new AbortController();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#search.cancel();
    clearTimeout(this.#poll);
    this.#poll = undefined;
    // Uploads under way go on (the person asked for them); only the reads stop.
    this.#alive.abort();
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('documentId')) void this.#openDocument(this.documentId);
  }

  protected override updated(changed: PropertyValues): void {
    // A document shown for the first time takes focus on its name (not when only its
    // status moved on); one that is gone, on the way back.
    if (changed.has('open')) {
      const before = changed.get('open') as Open | undefined;
      const open = this.open;
      if (open.kind === 'document' && !(before?.kind === 'document' && before.document.id === open.document.id)) {
        const view = this.renderRoot.querySelector<SkaldDocumentView>('skald-document-view');
        void view?.updateComplete.then(() => view.focus());
      } else if (open.kind === 'gone' && before?.kind !== 'gone') {
        this.renderRoot.querySelector<HTMLElement>('[data-testid=document-gone] a')?.focus();
      }
    }
    // Back to the list: focus goes to the document just left, else to the heading.
    const left = changed.get('documentId') as string | null | undefined;
    if (changed.has('documentId') && this.documentId === null && left) {
      const row = this.renderRoot.querySelector<HTMLElement>(`[data-testid=file][data-id="${CSS.escape(left)}"] [data-testid=file-open]`);
      (row ?? this.renderRoot.querySelector<HTMLElement>('#files-title'))?.focus();
    }
  }

  // ---- the open document ----------------------------------------------------

  async #openDocument(id: string | null): Promise<void> {
    if (id === null) {
      this.open = { kind: 'none' };
      return;
    }
    if (this.open.kind === 'document' && this.open.document.id === id) return;
    const listed = this.#list.value?.find((document) => document.id === id);
    this.open = listed ? { kind: 'document', document: listed } : { kind: 'loading', id };
    try {
      // Read again even when listed: its status may have moved on since.
      const document = await this.#client().document(id, this.#alive.signal);
      if (this.documentId === id) this.open = { kind: 'document', document };
      this.#pollSoon();
    } catch (error) {
      if (isCancelled(error) || this.documentId !== id) return;
      const gone = error instanceof ApiError && error.status === 404;
      this.open = { kind: 'gone', id, problem: gone ? strings.fileGone : describeError(error) };
    }
  }

  // ---- documents being read ---------------------------------------------------

  /** Asks after the documents still being read in a second, unless that is already due. */
  #pollSoon(): void {
    if (this.#poll !== undefined || this.#alive.signal.aborted) return;
    this.#poll = setTimeout(() => {
      this.#poll = undefined;
      void this.#pollOnce();
    }, POLL_MS);
  }

  async #pollOnce(): Promise<void> {
    const reading = new Set((this.#list.value ?? []).filter((d) => d.status === 'reading').map((d) => d.id));
    if (this.open.kind === 'document' && this.open.document.status === 'reading') reading.add(this.open.document.id);
    if (reading.size === 0) return;
    const client = this.login?.client;
    if (!client) return;
    const signal = this.#alive.signal;
    const answers = await Promise.all(
      [...reading].map((id) =>
        client.document(id, signal).then(
          (document): readonly [string, StoredDocument | null] => [id, document],
          (error: unknown): readonly [string, StoredDocument | null] | null =>
            error instanceof ApiError && error.status === 404 ? [id, null] : null,
        ),
      ),
    );
    if (signal.aborted) return;
    const now = new Map(answers.filter((answer) => answer !== null));
    for (const [id, document] of now) this.#replace(id, document);
    // Still reading (or the answer did not come): ask again in a second.
    if ([...reading].some((id) => !now.has(id) || now.get(id)?.status === 'reading')) this.#pollSoon();
  }

  /** Puts a document's new state in the list and the viewer (`null`: it is gone), saying a finished reading. */
  #replace(id: string, document: StoredDocument | null): void {
    const list = this.#list.value;
    const before = list?.find((d) => d.id === id) ?? (this.open.kind === 'document' && this.open.document.id === id ? this.open.document : undefined);
    if (list !== undefined) {
      this.#list.set(document === null ? list.filter((d) => d.id !== id) : list.map((d) => (d.id === id ? document : d)));
    }
    if (this.open.kind === 'document' && this.open.document.id === id) {
      this.open = document === null ? { kind: 'gone', id, problem: strings.fileGone } : { kind: 'document', document };
    }
    if (document !== null && before?.status === 'reading' && document.status !== 'reading') {
      this.announcement = statusAnnouncement(document) ?? '';
      // Its text can be searched now.
      void this.#search.refresh();
    }
  }

  // ---- uploads ------------------------------------------------------------------

  /** Queues `files` for upload into the chosen pool; one goes at a time, in order. */
  #enqueue(files: readonly File[]): void {
    if (files.length === 0) return;
    const added = files.map((file): Upload => {
      const refusal = uploadRefusal(file);
      return { key: ++this.#uploadKey, file, pool: this.pool, state: refusal === null ? 'waiting' : 'failed', sent: 0, problem: refusal ?? '' };
    });
    this.uploads = [...this.uploads, ...added];
    const refused = added.filter((upload) => upload.state === 'failed');
    if (refused.length > 0) this.announcement = refused.map((upload) => strings.filesUploadFailed.replace('{name}', upload.file.name).replace('{reason}', upload.problem)).join(' ');
    void this.#sendWaiting();
  }

  async #sendWaiting(): Promise<void> {
    if (this.#uploading) return;
    this.#uploading = true;
    try {
      for (let next = this.uploads.find((u) => u.state === 'waiting'); next !== undefined; next = this.uploads.find((u) => u.state === 'waiting')) {
        await this.#send(next);
      }
    } finally {
      this.#uploading = false;
    }
  }

  async #send(upload: Upload): Promise<void> {
    const { key, file } = upload;
    this.#updateUpload(key, { state: 'sending', sent: 0 });
    this.announcement = strings.filesUploadStarted.replace('{name}', file.name);
    try {
      const document = await this.#client().uploadDocument(file, file.name, upload.pool, (sent) => this.#updateUpload(key, { sent }));
      this.uploads = this.uploads.filter((u) => u.key !== key);
      this.announcement = strings.filesUploadDone.replace('{name}', file.name);
      const list = this.#list.value ?? [];
      this.#list.set([document, ...list.filter((d) => d.id !== document.id)]);
      this.#pollSoon();
    } catch (error) {
      const problem = uploadFailure(error, file.name);
      this.#updateUpload(key, { state: 'failed', problem });
      this.announcement = strings.filesUploadFailed.replace('{name}', file.name).replace('{reason}', problem);
    }
  }

  #updateUpload(key: number, change: Partial<Pick<Upload, 'state' | 'sent' | 'problem'>>): void {
    this.uploads = this.uploads.map((u) => (u.key === key ? { ...u, ...change } : u));
  }

  #chosen(event: Event): void {
    const input = event.target as HTMLInputElement;
    this.#enqueue([...(input.files ?? [])]);
    // The same file can be chosen again (after a failure, say).
    input.value = '';
  }

  // Dragging files over the page: the drop zone shows, and a drop uploads them. Dragged
  // text or links are left to the browser.

  #dragEnter(event: DragEvent): void {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    this.#dragDepth += 1;
    this.dragging = true;
  }

  #dragOver(event: DragEvent): void {
    if (!carriesFiles(event)) return;
    // Without this the browser would open the file in place of the app.
    event.preventDefault();
    if (event.dataTransfer) event.dataTransfer.dropEffect = 'copy';
  }

  #dragLeave(event: DragEvent): void {
    if (!carriesFiles(event)) return;
    this.#dragDepth = Math.max(0, this.#dragDepth - 1);
    if (this.#dragDepth === 0) this.dragging = false;
  }

  #drop(event: DragEvent): void {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    this.#dragDepth = 0;
    this.dragging = false;
    this.#enqueue([...(event.dataTransfer?.files ?? [])]);
  }

  // ---- deleting -------------------------------------------------------------------

  /** Whether this person may delete `document`: their own, or as the administrator (the server decides again). */
  #mayDelete(document: StoredDocument): boolean {
    const me = this.login?.me;
    return document.pool === 'private' || document.uploaded_by === me?.user.id || me?.role?.manage_instance === true;
  }

  async #delete(document: StoredDocument): Promise<void> {
    const confirmed = await this.confirm?.ask({
      title: strings.fileDeleteTitle,
      body: (document.pool === 'shared' ? strings.fileDeleteSharedBody : strings.fileDeleteBody).replace('{name}', document.name),
      action: strings.delete,
    });
    if (!confirmed) return;
    this.error = '';
    try {
      await this.#client().deleteDocument(document.id);
      this.announcement = strings.fileDeleted.replace('{name}', document.name);
      const list = this.#list.value;
      if (list !== undefined) this.#list.set(list.filter((d) => d.id !== document.id));
      void this.#search.refresh();
      if (this.documentId === document.id) {
        // The address named what is gone: the list takes its place in the history.
        window.location.replace(routeHash({ page: 'files' }));
      } else {
        await this.updateComplete;
        this.renderRoot.querySelector<HTMLElement>('#files-title')?.focus();
      }
    } catch (error) {
      this.error = describeError(error);
    }
  }

  // ---- rendering ------------------------------------------------------------------

  override render(): TemplateResult {
    const viewing = this.documentId !== null;
    return html`
      <div
        class="drop"
        data-testid="files-drop"
        ?data-dragging=${this.dragging}
        @dragenter=${this.#dragEnter}
        @dragover=${this.#dragOver}
        @dragleave=${this.#dragLeave}
        @drop=${this.#drop}
      >
        <header class="bar">
          <h2 id="files-title" tabindex="-1">${strings.filesTitle}</h2>
          ${viewing
            ? nothing
            : // Beside the list only, where the choice of who can read it is in sight (a drop says it).
              html`<button type="button" class="primary" data-testid="files-upload" aria-describedby="files-limit" @click=${() => this.input?.click()}>
                ${uploadIcon}${strings.filesUpload}
              </button>`}
          <input id="files-input" class="visually-hidden" type="file" multiple tabindex="-1" aria-hidden="true" data-testid="files-input" @change=${this.#chosen} />
        </header>
        <div class="scroll">
          <div class="column">
            ${this.error ? html`<p class="notice error" role="alert" data-testid="files-error">${this.error}</p>` : nothing}
            ${this.#renderUploads()} ${viewing ? this.#renderOpen() : this.#renderList()}
          </div>
        </div>
        ${this.dragging
          ? dropOverlay({ icon: uploadIcon, title: strings.filesDropHere, detail: this.pool === 'shared' ? strings.filesDropShared : strings.filesDropPrivate })
          : nothing}
      </div>
      <p class="visually-hidden" role="status" aria-live="polite">${this.announcement}</p>
      <skald-confirm></skald-confirm>
    `;
  }

  #renderUploads(): TemplateResult | typeof nothing {
    if (this.uploads.length === 0) return nothing;
    return html`<ul class="uploads" aria-label=${strings.filesUploadsLabel}>
      ${this.uploads.map((upload) => {
        const { file } = upload;
        return html`<li class="upload" data-testid="upload" data-state=${upload.state}>
          ${upload.state === 'failed'
            ? html`<p class="upload-problem" data-testid="upload-problem">${strings.filesUploadFailed.replace('{name}', file.name).replace('{reason}', upload.problem)}</p>
                <button
                  type="button"
                  class="quiet icon-button"
                  data-testid="upload-dismiss"
                  @click=${() => (this.uploads = this.uploads.filter((u) => u.key !== upload.key))}
                >
                  ${closeIcon}<span class="visually-hidden">${strings.dismiss}</span>
                </button>`
            : upload.state === 'waiting'
              ? html`<p>${strings.filesUploadWaiting.replace('{name}', file.name)}</p>`
              : html`<label for="upload-${upload.key}">${file.name}</label>
                  <progress id="upload-${upload.key}" max="100" value=${uploadPercent(upload.sent, file.size)}></progress>
                  <span class="muted small num">
                    ${strings.filesUploadSending.replace('{sent}', formatBytes(upload.sent)).replace('{total}', formatBytes(file.size))}
                  </span>`}
        </li>`;
      })}
    </ul>`;
  }

  #renderList(): TemplateResult {
    return html`
      <p class="lead">${strings.filesLead}</p>
      <fieldset class="block pool">
        <legend>${strings.filesPoolLegend}</legend>
        <div class="check">
          <input
            id="pool-private"
            type="radio"
            name="pool"
            value="private"
            data-testid="files-pool-private"
            .checked=${this.pool === 'private'}
            @change=${() => (this.pool = 'private')}
          />
          <label for="pool-private">${strings.filesPoolPrivate}</label>
        </div>
        <div class="check">
          <input
            id="pool-shared"
            type="radio"
            name="pool"
            value="shared"
            aria-describedby="pool-shared-hint"
            data-testid="files-pool-shared"
            .checked=${this.pool === 'shared'}
            @change=${() => (this.pool = 'shared')}
          />
          <span>
            <label for="pool-shared">${strings.filesPoolShared}</label>
            <span class="hint" id="pool-shared-hint">${strings.filesPoolSharedHint}</span>
          </span>
        </div>
        <p class="hint" id="files-limit">${strings.filesUploadHint.replace('{limit}', formatBytes(MAX_DOCUMENT_BYTES))}</p>
      </fieldset>
      <div class="search">
        <label class="visually-hidden" for="files-search">${strings.filesSearchLabel}</label>
        <input
          id="files-search"
          type="search"
          data-testid="files-search"
          placeholder=${strings.filesSearchPlaceholder}
          .value=${this.query}
          @input=${(e: Event) => {
            this.query = (e.target as HTMLInputElement).value;
            this.error = '';
            this.#search.input(this.query);
          }}
        />
      </div>
      ${this.hits !== null ? this.#renderHits(this.hits) : html`${this.#list.status()} ${this.#renderDocuments()}`}
    `;
  }

  #renderHits(hits: readonly DocumentHit[]): TemplateResult {
    if (hits.length === 0) return html`<p class="hint" data-testid="files-no-match">${strings.filesNoMatch}</p>`;
    return html`<ul class="rows hits">
      ${hits.map(
        (hit) => html`<li>
          <a class="hit" href=${documentLink(hit.document, hit.page)} data-testid="file-hit" data-id=${hit.document} data-page=${hit.page}>
            <span class="hit-title">${hit.name}</span>
            <span class="muted small">
              ${strings.fileHitPage.replace('{n}', formatNumber(hit.page))}
              ${hit.pool === 'shared' ? html` · ${strings.fileSharedTag}` : nothing}
            </span>
            <span class="snippet">${snippetParts(hit.snippet).map((part) => (part.match ? html`<mark>${part.text}</mark>` : part.text))}</span>
          </a>
        </li>`,
      )}
    </ul>`;
  }

  #renderDocuments(): TemplateResult | typeof nothing {
    const documents = this.#list.value;
    if (documents === undefined) return nothing;
    if (documents.length === 0) {
      return html`<div class="block" data-testid="files-empty">
        <h3>${strings.filesEmptyTitle}</h3>
        <p class="hint">${strings.filesEmpty}</p>
      </div>`;
    }
    const me = this.login?.me.user.id;
    return html`<ul class="rows documents" aria-label=${strings.filesListLabel}>
      ${documents.map(
        (document) => html`<li data-testid="file" data-id=${document.id} data-status=${document.status} data-pool=${document.pool}>
          <div class="row-head">
            <div class="row-title">
              <a class="file-name" href=${documentLink(document.id)} data-testid="file-open">${document.name}</a>
              ${document.pool === 'shared'
                ? html`<span class="tag plain" data-testid="file-shared">${strings.fileSharedTag}</span>
                    <span class="muted small">
                      ${document.uploaded_by !== null && document.uploaded_by === me
                        ? strings.fileSharedByYou
                        : strings.fileSharedBy.replace('{name}', document.uploaded_by_name ?? strings.unknownPerson)}
                    </span>`
                : nothing}
            </div>
            ${this.#mayDelete(document)
              ? html`<button type="button" class="quiet danger" data-testid="file-delete" @click=${() => void this.#delete(document)}>
                  ${trashIcon}${strings.delete}<span class="visually-hidden"> ${document.name}</span>
                </button>`
              : nothing}
          </div>
          <p class="muted small facts">
            ${[
              kindLabel(document.kind),
              formatBytes(document.size),
              ...(document.pages === null ? [] : [plural(document.pages, strings.filePages).replace('{n}', formatNumber(document.pages))]),
              formatTime(document.created_at),
            ].join(' · ')}
          </p>
          <p class="status small" data-testid="file-status" data-status=${document.status}>${statusSentence(document)}</p>
        </li>`,
      )}
    </ul>`;
  }

  #renderOpen(): TemplateResult {
    const open = this.open;
    switch (open.kind) {
      case 'none':
      case 'loading':
        return html`<p class="hint" role="status">${strings.loading}</p>`;
      case 'gone':
        return html`<div data-testid="document-gone">
          <a href=${routeHash({ page: 'files' })}>${strings.fileBack}</a>
          <p class="notice error" role="alert">${open.problem}</p>
        </div>`;
      case 'document':
        return html`<skald-document-view
          .client=${this.login?.client ?? null}
          .file=${open.document}
          .page=${this.documentPage}
          ?canDelete=${this.#mayDelete(open.document)}
          @skald-document-delete=${() => void this.#delete(open.document)}
        ></skald-document-view>`;
    }
  }
}

function carriesFiles(event: DragEvent): boolean {
  return event.dataTransfer?.types.includes('Files') ?? false;
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-files': SkaldFiles;
  }
}
