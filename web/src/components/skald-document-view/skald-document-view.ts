/**
 * One document, shown by its kind (state/documents.ts `viewOf`): a PDF page drawn by
 * pdf.js with its words selectable over it (pdf/render.ts, loaded only now); an image from
 * a `data:` address made here from the bytes, under the media type its kind names (the
 * page's CSP allows images from itself and `data:` only); Markdown rendered by
 * skald-markdown, sanitized and with images inert, as replies are; anything else as the
 * text the server extracted, a page at a time, as plain text — never as HTML. PDFs and
 * text go page by page, the page coming from the address (`#/files/<id>?page=<n>`), so
 * Previous and Next are links and Back steps through the pages read. Every kind can be
 * downloaded as it was uploaded.
 *
 * Owns: the calls that read the document (its bytes, its text) while it is open. Never:
 * keeps the bytes after it closes, hands the file's own markup to the DOM, or changes or
 * deletes the document (it asks the page with `skald-document-delete`).
 */
import { LitElement, html, nothing, type PropertyValues, type TemplateResult } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';

import { ApiError, isCancelled, type ApiClient } from '../../api/client.js';
import type { Document as StoredDocument, DocumentText } from '../../api/types.js';
import { strings } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import { formatNumber, formatTime } from '../../i18n/format.js';
import { plural } from '../../i18n/locale.js';
import { imageType, kindLabel, pageToShow, statusSentence, viewOf, type DocumentView } from '../../state/documents.js';
import { formatBytes } from '../../state/local-models.js';
import { documentLink, routeHash } from '../../state/route.js';
import { controls, page } from '../../styles/controls.js';
import type { PdfDocument } from '../../pdf/render.js';
import { dataUrl } from '../data-url.js';
import { saveBlob } from '../download.js';
import { leftIcon, rightIcon, saveIcon, trashIcon } from '../icons.js';
import '../skald-markdown/skald-markdown.js';
import { styles } from './skald-document-view.styles.js';

/** What has been read of the document for its view. */
type Shown =
  | { readonly kind: 'loading' }
  | { readonly kind: 'failed'; readonly problem: string }
  | { readonly kind: 'pdf'; readonly pdf: PdfDocument }
  | { readonly kind: 'image'; readonly url: string }
  | { readonly kind: 'markdown'; readonly text: string }
  | { readonly kind: 'text'; readonly text: DocumentText }
  /** A text view with no text to read: the document is still being read, has none, or failed. */
  | { readonly kind: 'no-text' };

/** How long a new width must hold before a PDF page is drawn again to fit it. */
const REFIT_MS = 150;

/**
 * Test hooks: `[data-testid=document-title]`, `document-shared` (a shared one's notice),
 * `document-status`, `document-download`, `document-delete`, `document-back`, `page-of`
 * (its `data-page` and `data-pages`), `page-previous`, `page-next`, and by view:
 * `pdf-canvas` and `.textLayer`, `document-image`, `document-markdown`, `document-text`;
 * `document-problem` when it cannot be shown. `data-view` on the host's article names the
 * view (`pdf`, `image`, `markdown`, `text`).
 *
 * @summary A document: its pages, its image or its text, and a download.
 * @fires skald-document-delete - delete it (the page asks first)
 */
@customElement('skald-document-view')
export class SkaldDocumentView extends LitElement {
  static override styles = [controls, page, styles];

  @property({ attribute: false }) client: ApiClient | null = null;
  /** The document as the server last described it (its status changes while it is read). */
  @property({ attribute: false }) file: StoredDocument | null = null;
  /** The page asked for, counted from 1. */
  @property({ type: Number }) page = 1;
  /** Whether this person may delete it (the server decides again). */
  @property({ type: Boolean }) canDelete = false;

  @state() private shown: Shown = { kind: 'loading' };
  @state() private problem = '';
  @state() private downloading = false;

  @query('h3') private heading?: HTMLElement;
  @query('canvas') private canvas?: HTMLCanvasElement;
  @query('.textLayer') private textLayer?: HTMLElement;
  @query('.pdf-frame') private frame?: HTMLElement;
  @query('#page-of') private pageOf?: HTMLElement;

  /** Aborted when the document read now is no longer wanted (another one, or leaving). */
  #reading = new AbortController();
  /** The bytes as read, for the download; dropped with the document. */
  #bytes: Blob | null = null;
  /** Counts PDF drawings asked for: only the latest may report a failure. */
  #drawn = 0;
  #refit: ReturnType<typeof setTimeout> | undefined;
  #width = 0;
  readonly #resize = new ResizeObserver(() => {
    clearTimeout(this.#refit);
    this.#refit = setTimeout(() => {
      if (this.frame !== undefined && Math.abs(this.frame.clientWidth - this.#width) > 1) void this.#drawPdf();
    }, REFIT_MS);
  });

  override focus(): void {
    this.heading?.focus();
  }

  override connectedCallback(): void {
    super.connectedCallback();
    // Back in the page (a cached element put back): read again what was let go of.
    if (this.hasUpdated && this.file !== null) this.#read(this.file);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#close();
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (!changed.has('file')) {
      if (changed.has('page') && this.shown.kind === 'text') this.#readText();
      return;
    }
    const before = changed.get('file');
    const now = this.file;
    if (now === null) {
      this.#close();
      return;
    }
    if (before?.id !== now.id) {
      this.#read(now);
    } else if (viewOf(now) === 'text' && (before.status !== now.status || changed.has('page'))) {
      // Read, the document has its text now (or turned out to have none).
      this.#readText();
    }
  }

  protected override updated(changed: PropertyValues): void {
    if (this.shown.kind === 'pdf' && (changed.has('shown') || changed.has('page'))) void this.#drawPdf();
    if (changed.has('shown')) {
      this.#resize.disconnect();
      if (this.shown.kind === 'pdf' && this.frame) this.#resize.observe(this.frame);
    }
    // A page turned from the keyboard: if the link pressed went away (the last page has no
    // Next), focus goes to the page's number rather than back to the top of the window.
    if (changed.has('page') && changed.get('page') !== undefined) {
      const active = this.renderRoot instanceof ShadowRoot ? this.renderRoot.activeElement : null;
      if (active === null) this.pageOf?.focus();
    }
  }

  /** Forgets what was read and reads `file` for its view. */
  #read(file: StoredDocument): void {
    this.#close();
    const signal = this.#reading.signal;
    const view = viewOf(file);
    if (view === 'text') {
      this.#readText();
      return;
    }
    this.shown = { kind: 'loading' };
    void this.#readBytes(file, view, signal);
  }

  async #readBytes(file: StoredDocument, view: Exclude<DocumentView, 'text'>, signal: AbortSignal): Promise<void> {
    const client = this.client;
    if (client === null) return;
    try {
      const bytes = await client.documentContent(file.id, signal);
      if (signal.aborted) return;
      this.#bytes = bytes;
      switch (view) {
        case 'pdf': {
          const { PdfDocument } = await import('../../pdf/render.js');
          const pdf = await PdfDocument.open(new Uint8Array(await bytes.arrayBuffer()));
          if (signal.aborted) {
            void pdf.destroy();
            return;
          }
          this.shown = { kind: 'pdf', pdf };
          break;
        }
        case 'image': {
          // Under the type its kind names, never what the bytes claim.
          const url = await dataUrl(bytes, imageType(file.kind) ?? 'application/octet-stream');
          if (!signal.aborted) this.shown = { kind: 'image', url };
          break;
        }
        case 'markdown': {
          const text = await bytes.text();
          if (!signal.aborted) this.shown = { kind: 'markdown', text };
          break;
        }
      }
    } catch (error) {
      if (signal.aborted || isCancelled(error)) return;
      this.shown = { kind: 'failed', problem: view === 'pdf' && !(error instanceof ApiError) ? strings.filePdfFailed : describeError(error) };
    }
  }

  /** The extracted text of the page asked for, once the document has been read. */
  #readText(): void {
    const file = this.file;
    const client = this.client;
    if (file === null || client === null) return;
    this.#reading.abort();
    this.#reading = new AbortController();
    const signal = this.#reading.signal;
    if (file.status !== 'ready') {
      this.shown = { kind: 'no-text' };
      return;
    }
    // The text on screen stays until the next page's arrives: turning pages does not flash.
    if (this.shown.kind !== 'text') this.shown = { kind: 'loading' };
    const known = this.shown.kind === 'text' ? this.shown.text.pages : file.pages;
    const at = pageToShow(this.page, known);
    void client.documentText(file.id, at, signal).then(
      (text) => {
        if (!signal.aborted) this.shown = { kind: 'text', text };
      },
      (error: unknown) => {
        if (!signal.aborted && !isCancelled(error)) this.shown = { kind: 'failed', problem: describeError(error) };
      },
    );
  }

  async #drawPdf(): Promise<void> {
    const shown = this.shown;
    const { canvas, textLayer, frame } = this;
    if (shown.kind !== 'pdf' || !canvas || !textLayer || !frame) return;
    const drawing = ++this.#drawn;
    this.#width = frame.clientWidth;
    try {
      await shown.pdf.drawPage(pageToShow(this.page, shown.pdf.pages), { canvas, textLayer, width: this.#width });
      if (drawing === this.#drawn) this.problem = '';
    } catch {
      // A drawing cut short by the next one is no failure; only the latest one's counts.
      if (drawing === this.#drawn && this.shown === shown) this.problem = strings.filePdfFailed;
    }
  }

  /** Lets go of what was read: stops reading, ends pdf.js's worker, drops the bytes. */
  #close(): void {
    this.#reading.abort();
    this.#reading = new AbortController();
    this.#resize.disconnect();
    clearTimeout(this.#refit);
    this.#drawn += 1;
    if (this.shown.kind === 'pdf') void this.shown.pdf.destroy();
    this.shown = { kind: 'loading' };
    this.#bytes = null;
    this.problem = '';
  }

  async #download(file: StoredDocument): Promise<void> {
    const client = this.client;
    if (client === null || this.downloading) return;
    this.downloading = true;
    this.problem = '';
    try {
      const bytes = this.#bytes ?? (await client.documentContent(file.id));
      saveBlob(bytes, file.name, this.renderRoot);
    } catch (error) {
      if (!isCancelled(error)) this.problem = describeError(error);
    } finally {
      this.downloading = false;
    }
  }

  override render(): TemplateResult {
    const file = this.file;
    if (file === null) return html``;
    const view = viewOf(file);
    const pages = this.#pages(file);
    return html`<article class="viewer" aria-labelledby="document-heading" data-view=${view}>
      <a class="back" href=${routeHash({ page: 'files' })} data-testid="document-back">${strings.fileBack}</a>
      <h3 id="document-heading" tabindex="-1" data-testid="document-title">${file.name}</h3>
      <p class="muted small facts">
        ${[kindLabel(file.kind), formatBytes(file.size), ...(file.pages === null ? [] : [plural(file.pages, strings.filePages).replace('{n}', formatNumber(file.pages))]), formatTime(file.created_at)].join(' · ')}
      </p>
      ${file.pool === 'shared'
        ? html`<p class="notice warn" data-testid="document-shared">
            ${strings.fileSharedNotice}
            ${file.uploaded_by_name ? html`<span class="by">${strings.fileSharedBy.replace('{name}', file.uploaded_by_name)}</span>` : nothing}
          </p>`
        : nothing}
      <p class="status" data-testid="document-status" data-status=${file.status}>${statusSentence(file)}</p>
      <div class="actions">
        <button type="button" data-testid="document-download" ?disabled=${this.downloading} @click=${() => void this.#download(file)}>
          ${saveIcon}${strings.fileDownload}
        </button>
        ${this.canDelete
          ? html`<button
              type="button"
              class="danger"
              data-testid="document-delete"
              @click=${() => this.dispatchEvent(new Event('skald-document-delete', { bubbles: true, composed: true }))}
            >
              ${trashIcon}${strings.delete}
            </button>`
          : nothing}
      </div>
      ${this.problem ? html`<p class="notice error" role="alert" data-testid="document-problem">${this.problem}</p>` : nothing}
      ${pages === null ? nothing : this.#renderPager(file, pages)}
      <div class="content">${this.#renderContent(file)}</div>
    </article>`;
  }

  /** How many pages the view turns through, or `null` when it shows the whole document. */
  #pages(file: StoredDocument): number | null {
    switch (this.shown.kind) {
      case 'pdf':
        return this.shown.pdf.pages;
      case 'text':
        return this.shown.text.pages;
      default:
        return viewOf(file) === 'text' && file.pages !== null && file.status === 'ready' ? file.pages : null;
    }
  }

  #renderPager(file: StoredDocument, pages: number): TemplateResult {
    const at = pageToShow(this.page, pages);
    const link = (to: number, label: string, testid: string, icon: TemplateResult): TemplateResult =>
      to >= 1 && to <= pages
        ? html`<a class="button" href=${documentLink(file.id, to)} data-testid=${testid}>${icon}${label}</a>`
        : html`<button type="button" disabled data-testid=${testid}>${icon}${label}</button>`;
    return html`<nav class="pager" aria-label=${strings.filePagesLabel}>
      ${link(at - 1, strings.filePrevious, 'page-previous', leftIcon)}
      <p id="page-of" class="page-of" tabindex="-1" aria-live="polite" data-testid="page-of" data-page=${at} data-pages=${pages}>
        ${strings.filePageOf.replace('{n}', formatNumber(at)).replace('{total}', formatNumber(pages))}
      </p>
      ${link(at + 1, strings.fileNext, 'page-next', rightIcon)}
    </nav>`;
  }

  #renderContent(file: StoredDocument): TemplateResult {
    const shown = this.shown;
    switch (shown.kind) {
      case 'loading':
        return html`<p class="hint" role="status">${strings.loading}</p>`;
      case 'failed':
        return html`<p class="notice error" role="alert" data-testid="document-problem">${shown.problem}</p>`;
      case 'no-text':
        // No text, or none yet: the status above says why.
        return file.status === 'reading' ? html`<p class="hint">${strings.fileStillReading}</p>` : html``;
      case 'pdf':
        // The canvas is the picture; the text layer over it carries the words, for
        // selection, find and screen readers alike.
        return html`<div class="pdf-frame">
          <div class="pdf-page">
            <canvas aria-hidden="true" data-testid="pdf-canvas"></canvas>
            <div class="textLayer"></div>
          </div>
        </div>`;
      case 'image':
        return html`<img class="image" src=${shown.url} alt=${strings.fileImageAlt.replace('{name}', file.name)} data-testid="document-image" />`;
      case 'markdown':
        return html`<div class="markdown" data-testid="document-markdown"><skald-markdown .text=${shown.text}></skald-markdown></div>`;
      case 'text':
        return shown.text.text.trim() === ''
          ? html`<p class="hint" data-testid="document-text">${strings.fileNoTextOnPage}</p>`
          : html`<pre class="text page-text" tabindex="0" aria-labelledby="page-of" data-testid="document-text">${shown.text.text}</pre>`;
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-document-view': SkaldDocumentView;
  }
}
