/**
 * The built-in model's recommended models (§9), to download in one step, and
 * a model file to import instead: each with its approximate size, licence and
 * whether it can use tools; a download's progress as the server reports it;
 * the server's reason when one stops, with "Try again" (which resumes) and,
 * in setup, "Import a file instead". An upload shows its own progress.
 *
 * The memory search model (kind `embedding`) is no chat model: on the models page its
 * card says what it is for; in setup it is not offered as a choice of its own but
 * beside the chat model — "Also download memory search", on unless unticked — and
 * downloaded with it.
 *
 * Owns: the administrator's calls to start downloads and upload files.
 * Never: decides whether a file is a usable model; the server checks it.
 */
import { LitElement, html, nothing, type PropertyValues, type TemplateResult } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';

import { ApiError, type ApiClient } from '../../api/client.js';
import type { Catalogue, CatalogueEntry, DownloadStatus } from '../../api/types.js';
import { LocalDownloadsController } from '../../controllers/local-downloads-controller.js';
import { ResourceController } from '../../controllers/resource-controller.js';
import { strings } from '../../i18n/en.js';
import { describeError, sentence } from '../../i18n/errors.js';
import type { LiveConnection } from '../../state/live.js';
import {
  downloadFor,
  downloadSize,
  entryFacts,
  isActive,
  isEmbedding,
  modelNameFromFile,
  orderCatalogue,
  progressPercent,
  progressText,
} from '../../state/local-models.js';
import { controls } from '../../styles/controls.js';
import { stepBlocks } from '../../styles/step-blocks.js';
import { styles } from './skald-local-catalogue.styles.js';
import { progressBar } from '../progress-bar.js';

/** A built-in model is ready: downloaded or imported. */
export class LocalModelAddedEvent extends Event {
  static readonly type = 'skald-local-model-added';
  constructor(
    /** `local/<id>` */
    readonly model: string,
    /** What people see it called. */
    readonly label: string,
    /** `chat`, or `embedding`: the memory search model, which answers nobody. */
    readonly kind: string = 'chat',
  ) {
    super(LocalModelAddedEvent.type, { bubbles: true, composed: true });
  }
}

/** An upload under way: how far it has come, or that the server is checking it. */
interface Upload {
  readonly file: string;
  readonly sent: number;
  readonly total: number;
  readonly checking: boolean;
}

/**
 * Test hooks: `[data-testid=local-entry]` (its `data-id`, `data-kind`, `data-state`: `none`,
 * `running`, `checking`, `done`, `failed`, `interrupted`, `installed`) with
 * `local-download`, `local-progress` (the progress bar), `local-error`,
 * `local-retry`, `local-import-instead`; in setup, `[data-testid=local-also-search]`
 * (the checkbox) and `[data-testid=local-search-download]` (that download, with the same
 * hooks as an entry); `[data-testid=local-unavailable]`;
 * `[data-testid=local-file]` (the file field), `local-upload-progress`,
 * `local-upload-error`, `local-upload-done`.
 *
 * @summary Download a recommended model, or import a model file, with progress.
 * @fires skald-local-model-added - a model was downloaded or imported and is ready
 */
@customElement('skald-local-catalogue')
export class SkaldLocalCatalogue extends LitElement {
  static override styles = [controls, stepBlocks, styles];

  /** An administrator's session client. */
  @property({ attribute: false }) client: ApiClient | null = null;
  /** The login's live socket; without one (setup), a socket is opened while a download moves. */
  @property({ attribute: false }) live: LiveConnection | null = null;
  /**
   * On the administrator's models page: only the models not yet here, the
   * import always offered, headings one level lower.
   */
  @property({ type: Boolean }) embedded = false;
  /** A model server was found already: downloading is the second choice, offered plainly. */
  @property({ type: Boolean }) alternative = false;

  /** Catalogue entry id → the id of the download started for it here. */
  @state() private started: ReadonlyMap<string, string> = new Map();
  /** Catalogue entry id → why starting its download was refused. */
  @state() private refusals: ReadonlyMap<string, string> = new Map();
  @state() private importOpen = false;
  @state() private upload: Upload | null = null;
  @state() private uploadError = '';
  @state() private uploadDone = '';
  @state() private announcement = '';
  /** In setup: the memory search model is downloaded along with the chat model chosen. */
  @state() private alsoSearch = true;

  @query('#local-file') private fileField?: HTMLInputElement;

  #uploadAbort: AbortController | null = null;

  readonly #catalogue = new ResourceController<Catalogue>(this, async (signal) => {
    const client = this.client;
    if (client === null) throw new ApiError('network', '', 0);
    return client.localCatalogue(signal);
  });

  readonly #downloads = new LocalDownloadsController(this, () => this.client, () => this.live, {
    onDone: (download) => this.#done(download),
  });

  /** Reads the catalogue again (after a model was deleted elsewhere on the page). */
  reload(): Promise<void> {
    return this.#catalogue.reload();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#uploadAbort?.abort();
  }

  protected override updated(changed: PropertyValues): void {
    if (changed.has('importOpen') && this.importOpen && !this.embedded) this.fileField?.focus();
  }

  override render(): TemplateResult {
    const catalogue = this.#catalogue.value;
    const level = this.embedded ? '4' : '2';
    if (catalogue && !catalogue.available) {
      return html`<section class="block" aria-labelledby="builtin-title">
        <h2 id="builtin-title" aria-level=${level}>${strings.localTitle}</h2>
        <p class="hint" data-testid="local-unavailable">${catalogue.unavailable ? unavailableText(catalogue.unavailable) : strings.localUnavailable}</p>
      </section>`;
    }
    // In setup the memory search model goes along with a chat model, not as a choice beside them.
    const entries = catalogue
      ? orderCatalogue(catalogue.models).filter((entry) => (this.embedded ? entry.installed === null : !isEmbedding(entry)))
      : [];
    return html`
      <section class="block" aria-labelledby="builtin-title">
        <h2 id="builtin-title" aria-level=${level}>${this.embedded ? strings.localCatalogueTitle : strings.localTitle}</h2>
        ${this.embedded ? nothing : html`<p class="hint lead">${this.alternative ? strings.localLeadAlternative : strings.localLead}</p>`}
        ${this.#catalogue.status()}
        ${entries.length > 0 ? html`<ul class="entries">${entries.map((entry) => this.#renderEntry(entry))}</ul>` : nothing}
        ${this.embedded ? nothing : this.#renderAlsoSearch()}
      </section>
      ${this.embedded || this.importOpen || this.upload !== null ? this.#renderImport() : nothing}
      <p class="visually-hidden" role="status" aria-live="polite">${this.announcement}</p>
    `;
  }

  /**
   * The download an entry shows: a finished one only while its model is here
   * (after a deletion the entry offers the download again).
   */
  #downloadOf(entry: CatalogueEntry): DownloadStatus | undefined {
    const download = downloadFor(entry, this.#downloads.downloads, this.started.get(entry.id));
    return download && (download.state !== 'done' || entry.installed !== null) ? download : undefined;
  }

  /** The memory search model of the catalogue, if it has one. */
  #searchEntry(): CatalogueEntry | undefined {
    return this.#catalogue.value?.models.find(isEmbedding);
  }

  /**
   * In setup, under the chat models: "Also download memory search (84 MB)", ticked; once its
   * download has started, how far it is instead. Nothing once it is here.
   */
  #renderAlsoSearch(): TemplateResult | typeof nothing {
    const entry = this.#searchEntry();
    if (entry === undefined) return nothing;
    const download = this.#downloadOf(entry);
    if (download !== undefined) {
      return html`<div class="also-search" data-testid="local-search-download" data-id=${entry.id} data-state=${download.state}>
        <p class="hint">${strings.localSearchLead}</p>
        ${this.#renderDownload(entry, download)}
      </div>`;
    }
    if (entry.installed !== null) return nothing;
    return html`<div class="also-search check">
      <input
        id="also-search"
        type="checkbox"
        data-testid="local-also-search"
        aria-describedby="also-search-hint"
        .checked=${this.alsoSearch}
        @change=${(e: Event) => (this.alsoSearch = (e.target as HTMLInputElement).checked)}
      />
      <label for="also-search">${strings.localAlsoSearch.replace('{size}', downloadSize(entry))}</label>
      <p class="hint" id="also-search-hint">${strings.localSearchLead}</p>
    </div>`;
  }

  #renderEntry(entry: CatalogueEntry): TemplateResult {
    const download = this.#downloadOf(entry);
    const installed = entry.installed !== null && (download === undefined || download.state === 'done');
    const stateName = download?.state ?? (installed ? 'installed' : 'none');
    const refusal = this.refusals.get(entry.id);
    const search = isEmbedding(entry);
    return html`<li class="entry" data-testid="local-entry" data-id=${entry.id} data-kind=${entry.kind} data-state=${stateName}>
      <div class="row-head">
        <div class="row-title">
          <strong>${entry.name}</strong>
          ${search ? html`<span class="tag">${strings.localMemorySearch}</span>` : nothing}
          ${entry.recommended === 'default' ? html`<span class="tag">${strings.localRecommended}</span>` : nothing}
          ${entry.recommended === 'tiny' ? html`<span class="tag">${strings.localTiny}</span>` : nothing}
          ${installed ? html`<span class="tag ok">${strings.localInstalled}</span>` : nothing}
        </div>
        ${download === undefined && !installed
          ? html`<button type="button" class=${this.alternative ? '' : 'primary'} data-testid="local-download" @click=${() => void this.#start(entry)}>
              ${strings.localDownload}<span class="visually-hidden"> ${entry.name}</span>
            </button>`
          : nothing}
      </div>
      <p class="description">${search ? strings.localSearchLead : entry.description}</p>
      <p class="hint facts">${entryFacts(entry).join(' · ')}</p>
      ${refusal ? html`<p class="notice error" role="alert" data-testid="local-error">${refusal}</p>` : nothing}
      ${download ? this.#renderDownload(entry, download) : nothing}
    </li>`;
  }

  #renderDownload(entry: CatalogueEntry, download: DownloadStatus): TemplateResult {
    switch (download.state) {
      case 'running':
      case 'checking': {
        const checking = download.state === 'checking';
        const starting = !checking && download.received === 0 && download.total === null;
        const text = checking ? strings.localChecking : starting ? strings.localStarting : progressText(download.received, download.total);
        return progressBar(
          'local-progress',
          strings.localDownloading.replace('{name}', entry.name),
          checking ? 100 : progressPercent(download.received, download.total),
          text,
        );
      }
      case 'done':
        return html`<p class="notice ok" data-testid="local-ready">
          ${isEmbedding(entry)
            ? strings.localSearchReady.replace('{name}', entry.name)
            : strings.localReady.replace('{name}', entry.name).replace('{model}', download.model ?? entry.installed ?? '')}
        </p>`;
      case 'failed':
      case 'interrupted':
        return html`<div class="notice error" role="alert" data-testid="local-error">
            <p>${strings.localFailed.replace('{name}', entry.name).replace('{reason}', sentence(download.error ?? ''))}</p>
            ${download.total !== null && download.received > 0
              ? html`<p class="small">${progressText(download.received, download.total)}</p>`
              : nothing}
          </div>
          <div class="actions">
            <button type="button" class="primary" data-testid="local-retry" @click=${() => void this.#start(entry)}>
              ${strings.localTryAgain}<span class="visually-hidden"> ${entry.name}</span>
            </button>
            ${this.embedded || isEmbedding(entry)
              ? nothing
              : html`<button type="button" data-testid="local-import-instead" @click=${() => (this.importOpen = true)}>
                  ${strings.localImportInstead}
                </button>`}
          </div>`;
    }
  }

  #renderImport(): TemplateResult {
    const upload = this.upload;
    const level = this.embedded ? '4' : '2';
    return html`<section class="block" aria-labelledby="import-title" data-testid="local-import">
      <h2 id="import-title" aria-level=${level}>${strings.localImportTitle}</h2>
      <p class="hint lead">${strings.localImportLead}</p>
      <div class="field">
        <label for="local-file">${strings.localImportLabel}</label>
        <input
          id="local-file"
          type="file"
          accept=".gguf"
          data-testid="local-file"
          ?disabled=${upload !== null}
          @change=${this.#picked}
        />
      </div>
      ${upload
        ? html`${progressBar(
              'local-upload-progress',
              strings.localUploading.replace('{name}', upload.file),
              upload.checking ? 100 : progressPercent(upload.sent, upload.total),
              upload.checking ? strings.localUploadChecking : progressText(upload.sent, upload.total),
            )}
            ${upload.checking
              ? nothing
              : html`<div class="actions"><button type="button" @click=${() => this.#uploadAbort?.abort()}>${strings.cancel}</button></div>`}`
        : nothing}
      ${this.uploadError ? html`<p class="notice error" role="alert" data-testid="local-upload-error">${this.uploadError}</p>` : nothing}
      ${this.uploadDone ? html`<p class="notice ok" data-testid="local-upload-done">${this.uploadDone}</p>` : nothing}
    </section>`;
  }

  async #start(entry: CatalogueEntry): Promise<void> {
    const client = this.client;
    if (client === null) return;
    // In setup, the memory search model comes along with the chat model, unless unticked.
    const search = this.#searchEntry();
    if (!this.embedded && this.alsoSearch && !isEmbedding(entry) && search !== undefined && search.installed === null) {
      const under = this.#downloadOf(search);
      if (!isActive(under) && under?.state !== 'done') void this.#start(search);
    }
    const refusals = new Map(this.refusals);
    refusals.delete(entry.id);
    this.refusals = refusals;
    // What was known of this entry's download before asking; the id is the server's to give.
    const since = downloadFor(entry, this.#downloads.downloads, this.started.get(entry.id));
    try {
      const id = await client.startDownload(entry.id);
      this.started = new Map(this.started).set(entry.id, id);
      const known = since?.id === id ? since : undefined;
      this.#downloads.started(
        {
          id,
          catalogue: entry.id,
          name: entry.name,
          url: entry.source_url,
          // "Starting…" until the server says how far it is (a resumed one starts part-way).
          received: 0,
          total: null,
          state: 'running',
          error: null,
          model: null,
        },
        known,
      );
      this.announcement = strings.localDownloading.replace('{name}', entry.name);
    } catch (error) {
      if (error instanceof ApiError && error.code === 'downloading') {
        // Already under way (another window started it): follow that one.
        await this.#downloads.refresh();
        return;
      }
      this.refusals = new Map(this.refusals).set(entry.id, describeError(error));
    }
  }

  #done(download: DownloadStatus): void {
    const catalogue = this.#catalogue.value;
    const entry = catalogue?.models.find((e) => this.started.get(e.id) === download.id || e.source_url === download.url);
    const label = entry?.name ?? download.name;
    const model = download.model ?? '';
    if (catalogue && entry) {
      // The entry is installed now; the server's catalogue says so too, once read again.
      this.#catalogue.set({ ...catalogue, models: catalogue.models.map((e) => (e === entry ? { ...e, installed: model } : e)) });
    }
    void this.#catalogue.reload();
    const kind = entry?.kind ?? 'chat';
    this.announcement =
      kind === 'embedding' ? strings.localSearchReady.replace('{name}', label) : strings.localReady.replace('{name}', label).replace('{model}', model);
    this.dispatchEvent(new LocalModelAddedEvent(model, label, kind));
  }

  async #picked(event: Event): Promise<void> {
    const field = event.target as HTMLInputElement;
    const file = field.files?.[0];
    const client = this.client;
    if (!file || client === null || this.upload !== null) return;
    const name = modelNameFromFile(file.name);
    this.uploadError = '';
    this.uploadDone = '';
    this.upload = { file: file.name, sent: 0, total: file.size, checking: false };
    this.announcement = strings.localUploading.replace('{name}', file.name);
    const abort = new AbortController();
    this.#uploadAbort = abort;
    try {
      const installed = await client.uploadLocalModel(
        file,
        name,
        (sent, total) => {
          if (this.upload === null) return;
          this.upload = { file: file.name, sent, total, checking: sent >= total };
        },
        abort.signal,
      );
      this.uploadDone =
        installed.kind === 'embedding'
          ? strings.localSearchReady.replace('{name}', name)
          : strings.localImported.replace('{name}', name).replace('{model}', installed.model);
      this.announcement = this.uploadDone;
      this.dispatchEvent(new LocalModelAddedEvent(installed.model, name, installed.kind));
      // The file may be one the catalogue recommends: it is installed now.
      void this.#catalogue.reload();
    } catch (error) {
      this.uploadError = strings.localImportFailed.replace('{reason}', describeError(error));
    } finally {
      this.upload = null;
      this.#uploadAbort = null;
      field.value = '';
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-local-catalogue': SkaldLocalCatalogue;
  }
  interface HTMLElementEventMap {
    [LocalModelAddedEvent.type]: LocalModelAddedEvent;
  }
}

/** The server's reason, as a sentence: it starts lower-case, to follow other words too. */
function unavailableText(reason: string): string {
  const sentence = reason.charAt(0).toUpperCase() + reason.slice(1);
  return /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
}
