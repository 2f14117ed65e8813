/**
 * Files attached to the next message, in the composer (its `attachments` slot): a
 * paperclip button that picks files (or `add` them, as a drop on the conversation does),
 * each uploaded into the person's own files — the same bytes kept already are that
 * document, not a second one — and shown as a chip with its name and how it stands:
 * uploading (with percent), being read, ready, or why it will not go. A document being read is asked after, less and less
 * often, until it is read. Removing a chip takes the file off the message; the document
 * stays in the person's files.
 *
 * Owns: the uploads it starts and the asking after them, while it is on the page. Never:
 * sends the message (the chat does, with the ids this says are ready), deletes a
 * document, or puts a file into the shared pool.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';

import { ApiError, isCancelled } from '../../api/client.js';
import type { Document as StoredDocument } from '../../api/types.js';
import { strings } from '../../i18n/en.js';
import { formatNumber } from '../../i18n/format.js';
import { plural } from '../../i18n/locale.js';
import { MAX_ATTACHED_DOCUMENTS, type AttachedDocument } from '../../state/attached-documents.js';
import { attachable, statusAnnouncement, statusSentence, uploadFailure, uploadPercent, uploadRefusal } from '../../state/documents.js';
import type { Login } from '../../state/login.js';
import { controls } from '../../styles/controls.js';
import { iconButton } from '../icon-button.js';
import { closeIcon, paperclipIcon } from '../icons.js';
import { styles } from './skald-attachments.styles.js';

/** One file picked for the next message, from the moment it is picked. */
interface Attachment {
  readonly key: number;
  /** The file's name, then the document's (the one kept, for bytes kept already). */
  readonly name: string;
  readonly state: 'uploading' | 'reading' | 'ready' | 'failed';
  /** The document, once the upload is answered. */
  readonly id: string | null;
  /** Bytes sent so far, of `total`, while uploading. */
  readonly sent: number;
  readonly total: number;
  /** Why it will not go with the message, in words, when `failed`. */
  readonly problem: string;
}

/** How long to wait before first asking after a document being read, and the longest wait. */
const FIRST_POLL_MS = 1000;
const LONGEST_POLL_MS = 8000;

/**
 * What the next message would carry: the documents ready to go, and whether any file is
 * still on its way (being uploaded or read), which sending waits for.
 */
export class AttachmentsChangeEvent extends Event {
  static readonly type = 'skald-attachments-change';
  constructor(
    readonly documents: readonly AttachedDocument[],
    readonly pending: boolean,
  ) {
    super(AttachmentsChangeEvent.type, { bubbles: true, composed: true });
  }
}

/** Whether a drag carries files (not text or a link, which are left to the browser). */
export function carriesFiles(event: DragEvent): boolean {
  return event.dataTransfer?.types.includes('Files') ?? false;
}

/**
 * Test hooks: `[data-testid=attach]` (the paperclip button), `attach-input` (its file
 * field), `attachment` (each chip: `data-state` uploading | reading | ready | failed,
 * `data-id` once uploaded) with `attachment-name`, `attachment-state` and
 * `attachment-remove`; `attachments-note` (a refusal of the whole pick: too many).
 *
 * @summary The files attached to the next message, with how each stands.
 * @fires skald-attachments-change - the documents ready to send changed, or whether any is pending
 */
@customElement('skald-attachments')
export class SkaldAttachments extends LitElement {
  static override styles = [controls, styles];

  @property({ attribute: false }) login: Login | null = null;

  @state() private attachments: readonly Attachment[] = [];
  @state() private note = '';
  @state() private announcement = '';

  @query('#attach-input') private input?: HTMLInputElement;

  #nextKey = 0;
  /** Per attachment: what stops its upload or its asking after (removed, or the page left). */
  readonly #stops = new Map<number, AbortController>();
  /** Per attachment being read: the next time it is asked after, and the wait after that. */
  readonly #polls = new Map<number, { timer: ReturnType<typeof setTimeout>; wait: number }>();
  /** What was last said to the chat, so only a change is told. */
  #told = '';

  /** Attaches `files` to the next message, up to the limit a message takes. */
  add(files: readonly File[]): void {
    if (files.length === 0) return;
    const room = Math.max(0, MAX_ATTACHED_DOCUMENTS - this.attachments.length);
    const taken = files.slice(0, room);
    const left = files.length - taken.length;
    this.note =
      left > 0
        ? plural(left, strings.attachmentsTooMany).replace('{max}', formatNumber(MAX_ATTACHED_DOCUMENTS)).replace('{n}', formatNumber(left))
        : '';
    const added = taken.map((file): [Attachment, File] => {
      const refusal = uploadRefusal(file);
      const attachment: Attachment = {
        key: ++this.#nextKey,
        name: file.name,
        state: refusal === null ? 'uploading' : 'failed',
        id: null,
        sent: 0,
        total: file.size,
        problem: refusal ?? '',
      };
      return [attachment, file];
    });
    this.#set([...this.attachments, ...added.map(([attachment]) => attachment)]);
    const said = added.map(([attachment]) =>
      attachment.state === 'failed'
        ? strings.attachmentFailed.replace('{name}', attachment.name).replace('{reason}', attachment.problem)
        : strings.filesUploadStarted.replace('{name}', attachment.name),
    );
    this.announcement = [...said, this.note].filter((s) => s !== '').join(' ');
    for (const [attachment, file] of added) if (attachment.state === 'uploading') void this.#upload(attachment.key, file);
  }

  /**
   * After a send: takes off the documents `sent` (every one when not given) and those that
   * could not go; a file still on its way stays, for the next message.
   */
  clear(sent?: readonly string[]): void {
    const gone = this.attachments.filter(
      (a) => sent === undefined || a.state === 'failed' || (a.id !== null && sent.includes(a.id) && a.state === 'ready'),
    );
    for (const attachment of gone) this.#stop(attachment.key);
    this.note = '';
    this.#set(this.attachments.filter((a) => !gone.includes(a)));
  }

  override connectedCallback(): void {
    super.connectedCallback();
    // Back on the page: what is still being read is asked after again.
    for (const attachment of this.attachments) if (attachment.state === 'reading' && attachment.id !== null) this.#pollLater(attachment.key, FIRST_POLL_MS);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    // Uploads under way go on (the person asked for them); the asking after stops.
    for (const key of [...this.#polls.keys()]) this.#stopPolling(key);
  }

  // ---- uploading and reading ----------------------------------------------------------

  async #upload(key: number, file: File): Promise<void> {
    const client = this.login?.client;
    if (!client) {
      this.#fail(key, strings.unexpected);
      return;
    }
    const stop = new AbortController();
    this.#stops.set(key, stop);
    try {
      const document = await client.uploadDocument(file, file.name, 'private', (sent, total) => this.#change(key, { sent, total }), stop.signal, {
        useExisting: true,
      });
      if (!this.#has(key)) return;
      const twin = this.attachments.find((a) => a.key !== key && a.id === document.id);
      if (twin) {
        this.#set(this.attachments.filter((a) => a.key !== key));
        this.announcement = strings.attachmentAlready.replace('{name}', document.name);
        return;
      }
      this.#settle(key, document);
    } catch (error) {
      if (isCancelled(error) && !this.#has(key)) return;
      this.#fail(key, uploadFailure(error, file.name));
    }
  }

  /** Puts what the server says of the document into its chip; asks again while it is being read. */
  #settle(key: number, document: StoredDocument): void {
    const before = this.attachments.find((a) => a.key === key);
    if (!before) return;
    switch (document.status) {
      case 'reading':
        this.#change(key, { state: 'reading', id: document.id, name: document.name });
        if (!this.#polls.has(key)) this.#pollLater(key, FIRST_POLL_MS);
        return;
      case 'ready':
      case 'no_text':
      case 'failed':
        if (attachable(document)) {
          this.#change(key, { state: 'ready', id: document.id, name: document.name });
          this.announcement = document.status === 'ready' ? (statusAnnouncement(document) ?? '') : strings.attachmentPicture.replace('{name}', document.name);
          return;
        }
        this.#change(key, { state: 'failed', id: document.id, name: document.name, problem: statusSentence(document) });
        this.announcement = strings.attachmentFailed.replace('{name}', document.name).replace('{reason}', statusSentence(document));
        return;
    }
  }

  #pollLater(key: number, wait: number): void {
    const timer = setTimeout(() => void this.#poll(key), wait);
    this.#polls.set(key, { timer, wait });
  }

  async #poll(key: number): Promise<void> {
    const wait = this.#polls.get(key)?.wait ?? FIRST_POLL_MS;
    const attachment = this.attachments.find((a) => a.key === key);
    const client = this.login?.client;
    if (!attachment || attachment.id === null || attachment.state !== 'reading' || !client || !this.isConnected) {
      this.#polls.delete(key);
      return;
    }
    const stop = this.#stops.get(key) ?? new AbortController();
    this.#stops.set(key, stop);
    try {
      const document = await client.document(attachment.id, stop.signal);
      this.#polls.delete(key);
      if (!this.#has(key) || !this.isConnected) return;
      if (document.status === 'reading') this.#pollLater(key, Math.min(wait * 1.5, LONGEST_POLL_MS));
      else this.#settle(key, document);
    } catch (error) {
      this.#polls.delete(key);
      if (!this.#has(key) || isCancelled(error)) return;
      if (error instanceof ApiError && error.status === 404) {
        this.#fail(key, strings.fileGone);
        return;
      }
      // A passing failure: ask again, later.
      if (this.isConnected) this.#pollLater(key, Math.min(wait * 2, LONGEST_POLL_MS));
    }
  }

  // ---- the list ---------------------------------------------------------------------

  #fail(key: number, problem: string): void {
    const attachment = this.attachments.find((a) => a.key === key);
    if (!attachment) return;
    this.#change(key, { state: 'failed', problem });
    this.announcement = strings.attachmentFailed.replace('{name}', attachment.name).replace('{reason}', problem);
  }

  /** Takes `attachment` off the message (its document stays); the focus goes to the next chip, or the paperclip. */
  #remove(attachment: Attachment): void {
    const at = this.attachments.indexOf(attachment);
    this.#stop(attachment.key);
    this.#set(this.attachments.filter((a) => a.key !== attachment.key));
    this.note = '';
    this.announcement = strings.attachmentRemoved.replace('{name}', attachment.name);
    void this.updateComplete.then(() => {
      const removes = this.renderRoot.querySelectorAll<HTMLElement>('[data-testid=attachment-remove]');
      (removes[Math.min(at, removes.length - 1)] ?? this.renderRoot.querySelector<HTMLElement>('[data-testid=attach]'))?.focus();
    });
  }

  #stop(key: number): void {
    this.#stops.get(key)?.abort();
    this.#stops.delete(key);
    this.#stopPolling(key);
  }

  #stopPolling(key: number): void {
    clearTimeout(this.#polls.get(key)?.timer);
    this.#polls.delete(key);
  }

  #has(key: number): boolean {
    return this.attachments.some((a) => a.key === key);
  }

  #change(key: number, change: Partial<Omit<Attachment, 'key'>>): void {
    this.#set(this.attachments.map((a) => (a.key === key ? { ...a, ...change } : a)));
  }

  /** The new list; the chat is told when what the message would carry changed. */
  #set(attachments: readonly Attachment[]): void {
    this.attachments = attachments;
    const documents = attachments.flatMap((a) => (a.state === 'ready' && a.id !== null ? [{ id: a.id, name: a.name }] : []));
    const pending = attachments.some((a) => a.state === 'uploading' || a.state === 'reading');
    const told = JSON.stringify([documents, pending]);
    if (told === this.#told) return;
    this.#told = told;
    this.dispatchEvent(new AttachmentsChangeEvent(documents, pending));
  }

  #chosen(event: Event): void {
    const input = event.target as HTMLInputElement;
    this.add([...(input.files ?? [])]);
    // The same file can be picked again (after removing it, say).
    input.value = '';
  }

  // ---- rendering --------------------------------------------------------------------

  // In the composer's row: the note and the chips each on a line of their own above the
  // field, then the paperclip beside it — in that order for the eye and for Tab alike.
  override render(): TemplateResult {
    return html`
      ${this.note ? html`<p class="hint note" data-testid="attachments-note">${this.note}</p>` : nothing}
      ${this.attachments.length > 0
        ? html`<ul class="chips" aria-label=${strings.attachmentsLabel}>
            ${this.attachments.map((attachment) => this.#renderChip(attachment))}
          </ul>`
        : nothing}
      ${iconButton({
        testid: 'attach',
        label: strings.attachFile,
        icon: paperclipIcon,
        className: 'attach',
        describedBy: 'attach-hint',
        onClick: () => this.input?.click(),
      })}
      <span class="visually-hidden" id="attach-hint">${strings.attachHint.replace('{max}', formatNumber(MAX_ATTACHED_DOCUMENTS))}</span>
      <input id="attach-input" class="visually-hidden" type="file" multiple tabindex="-1" aria-hidden="true" data-testid="attach-input" @change=${this.#chosen} />
      <p class="visually-hidden" role="status" aria-live="polite">${this.announcement}</p>
    `;
  }

  #renderChip(attachment: Attachment): TemplateResult {
    return html`<li class="chip" data-testid="attachment" data-state=${attachment.state} data-id=${attachment.id ?? nothing}>
      <span class="name" data-testid="attachment-name" title=${attachment.name}>${attachment.name}</span>
      <span class="state" data-testid="attachment-state">${this.#stateText(attachment)}</span>
      ${iconButton({
        testid: 'attachment-remove',
        label: strings.attachmentRemove.replace('{name}', attachment.name),
        icon: closeIcon,
        className: 'remove',
        onClick: () => this.#remove(attachment),
      })}
    </li>`;
  }

  #stateText(attachment: Attachment): string {
    switch (attachment.state) {
      case 'uploading':
        return strings.attachmentUploading.replace('{percent}', formatNumber(uploadPercent(attachment.sent, attachment.total)));
      case 'reading':
        return strings.fileStatusReading;
      case 'ready':
        return strings.fileStatusReady;
      case 'failed':
        return attachment.problem || strings.unexpected;
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-attachments': SkaldAttachments;
  }
  interface HTMLElementEventMap {
    [AttachmentsChangeEvent.type]: AttachmentsChangeEvent;
  }
}
