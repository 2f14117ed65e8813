/**
 * Voice on the administrator's Models page (§15): what `GET /api/voice` says this
 * computer can do — the engine that writes speech down and whether it can now (and
 * why not), the speech models here, the engine that reads answers aloud and the
 * Piper voices here — with a speech model or a voice added from a file on this
 * computer by its path, and the speech models and voices Skald can download, each
 * with its size, licence and checksums, its download's progress as the server
 * reports it, and the server's reason when one stops.
 *
 * Owns: the administrator's calls to add speech models and voices and to start their
 * downloads; reading the downloads once a second while one moves.
 * Never: decides whether a file is a usable model or voice; the server checks it.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';

import { ApiError, type ApiClient } from '../../api/client.js';
import type { DownloadStatus, SpeechModel, SpeechVoice, VoiceCatalogue, VoiceCatalogueEntry, VoiceOverview } from '../../api/types.js';
import { ResourceController } from '../../controllers/resource-controller.js';
import { strings } from '../../i18n/en.js';
import { describeError, sentence } from '../../i18n/errors.js';
import { formatNumber } from '../../i18n/format.js';
import { activeLocale } from '../../i18n/locale.js';
import { formatBytes, isActive, progressPercent, progressText } from '../../state/local-models.js';
import { controls, page } from '../../styles/controls.js';
import { styles } from './skald-admin-voice.styles.js';
import { progressBar } from '../progress-bar.js';

/** How often the downloads are read while one moves. */
const POLL_MS = 1000;

/** What is added from a path: a speech model, or a Piper voice. */
type Addition = 'model' | 'voice';

/** One "add from a file" form: whether it is sending, and what came of it. */
interface AddState {
  readonly busy: boolean;
  readonly error: string;
  readonly done: string;
}

const IDLE: AddState = { busy: false, error: '', done: '' };

/**
 * Test hooks: `[data-testid=voice-section]`; `voice-input-state` (whether speech can be
 * written down, and why not), `voice-speech-engine`; `[data-testid=voice-model]` and
 * `[data-testid=voice-voice]` (each its `data-id`); `voice-add-model-path`,
 * `voice-add-model`, `voice-add-voice-path`, `voice-add-voice` (a path field and its
 * button), `voice-added`; `[data-testid=voice-catalogue-entry]` (its `data-id`,
 * `data-kind`, `data-state`: `none`, `running`, `checking`, `done`, `failed`,
 * `interrupted`, `installed`) with `voice-download` (also "Try again"),
 * `voice-progress`, `voice-ready`, `voice-checksums`; `voice-error` (in a form, or in an
 * entry: the server's words).
 *
 * @summary Speech models and voices on this computer: what is here, add one from a file, download one.
 */
@customElement('skald-admin-voice')
export class SkaldAdminVoice extends LitElement {
  static override styles = [controls, page, styles];

  /** An administrator's session client. */
  @property({ attribute: false }) client: ApiClient | null = null;

  @state() private adding: Readonly<Record<Addition, AddState>> = { model: IDLE, voice: IDLE };
  /** Every download known, by id. */
  @state() private downloads: ReadonlyMap<string, DownloadStatus> = new Map();
  /** Catalogue entry id → the id of the download started for it here. */
  @state() private started: ReadonlyMap<string, string> = new Map();
  /** Catalogue entry id → why starting its download was refused. */
  @state() private refusals: ReadonlyMap<string, string> = new Map();
  @state() private announcement = '';

  /** Downloads seen moving here, whose end is still to be told. */
  readonly #moving = new Set<string>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #reading = false;
  #connected = false;

  readonly #overview = new ResourceController<VoiceOverview>(this, (signal) => {
    const client = this.client;
    if (client === null) return Promise.reject(new ApiError('network', '', 0));
    return client.voice(signal);
  });

  /** `null`: this server offers no catalogue (a Skald from before it had one). */
  readonly #catalogue = new ResourceController<VoiceCatalogue | null>(this, async (signal) => {
    const client = this.client;
    if (client === null) throw new ApiError('network', '', 0);
    try {
      const catalogue = await client.voiceCatalogue(signal);
      // Its downloads, with one started in another window.
      void this.#readDownloads();
      return catalogue;
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return null;
      throw error;
    }
  });

  override connectedCallback(): void {
    super.connectedCallback();
    this.#connected = true;
    this.#updatePolling();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#connected = false;
    this.#stopPolling();
  }

  override render(): TemplateResult {
    const overview = this.#overview.value;
    return html`<section class="block" aria-labelledby="voice-title" data-testid="voice-section">
      <h3 id="voice-title">${strings.voiceTitle}</h3>
      <p class="muted small">${strings.voiceAdminLead}</p>
      ${this.#overview.status()}
      ${overview ? html`${this.#renderInput(overview)} ${this.#renderReading(overview)}` : nothing}
      ${this.#renderCatalogue()}
      <p class="visually-hidden" role="status" aria-live="polite">${this.announcement}</p>
    </section>`;
  }

  #renderInput(overview: VoiceOverview): TemplateResult {
    const input = overview.transcription;
    return html`<section class="part" aria-labelledby="voice-input-title">
      <h4 id="voice-input-title">${strings.voiceInputTitle}</h4>
      <dl class="facts small">
        <dt>${strings.voiceEngine}</dt>
        <dd>${input.engine}</dd>
        <dt>${strings.voiceState}</dt>
        <dd data-testid="voice-input-state" data-available=${String(input.available)}>
          ${input.available ? strings.voiceInputReady : strings.voiceInputNot.replace('{why}', sentence(input.why ?? ''))}
          ${input.provider ? html`<br />${strings.voiceThroughProvider.replace('{provider}', input.provider)}` : nothing}
        </dd>
      </dl>
      <h5 class="list-title" id="voice-models-title">${strings.voiceModelsTitle}</h5>
      ${input.models.length === 0
        ? html`<p class="muted small" data-testid="voice-models-none">${strings.voiceModelsNone}</p>`
        : html`<ul class="rows items" aria-labelledby="voice-models-title">${input.models.map((model) => renderModel(model))}</ul>`}
      ${this.#renderAdd('model')}
    </section>`;
  }

  #renderReading(overview: VoiceOverview): TemplateResult {
    const speech = overview.speech;
    const engine =
      speech.engine === 'piper' ? strings.voiceByPiper : speech.engine === 'espeak-ng' ? strings.voiceByEspeak : strings.voiceByBrowser;
    return html`<section class="part" aria-labelledby="voice-reading-title">
      <h4 id="voice-reading-title">${strings.voiceReadingTitle}</h4>
      <dl class="facts small">
        <dt>${strings.voiceEngine}</dt>
        <dd data-testid="voice-speech-engine" data-engine=${speech.engine}>
          ${engine} ${speech.why ? sentence(speech.why) : nothing}
          ${speech.provider ? html`<br />${strings.voiceThroughProvider.replace('{provider}', speech.provider)}` : nothing}
        </dd>
      </dl>
      <h5 class="list-title" id="voice-voices-title">${strings.voiceVoicesTitle}</h5>
      ${speech.voices.length === 0
        ? html`<p class="muted small" data-testid="voice-voices-none">${strings.voiceVoicesNone}</p>`
        : html`<ul class="rows items" aria-labelledby="voice-voices-title">${speech.voices.map((voice) => renderVoice(voice))}</ul>`}
      ${this.#renderAdd('voice')}
    </section>`;
  }

  /** A path field and its button: a speech model or a voice from a file on this computer. */
  #renderAdd(what: Addition): TemplateResult {
    const add = this.adding[what];
    const field = `voice-add-${what}-path`;
    const label = what === 'model' ? strings.voiceAddModelLabel : strings.voiceAddVoiceLabel;
    return html`<form class="add" @submit=${(e: Event) => void this.#add(e, what)} novalidate>
      <div class="field">
        <label for=${field}>${label}</label>
        <input
          id=${field}
          data-testid=${field}
          autocomplete="off"
          spellcheck="false"
          maxlength="4096"
          ?disabled=${add.busy}
          aria-invalid=${add.error ? 'true' : 'false'}
          aria-describedby=${`${field}-hint${add.error ? ` ${field}-error` : ''}`}
        />
        <p class="hint" id=${`${field}-hint`}>${what === 'model' ? strings.voiceAddModelHint : strings.voiceAddVoiceHint}</p>
      </div>
      <div class="actions">
        <button type="submit" data-testid=${`voice-add-${what}`} ?disabled=${add.busy}>
          ${strings.voiceAdd}<span class="visually-hidden">: ${label}</span>
        </button>
      </div>
      <div aria-live="polite">
        ${add.busy ? html`<p class="hint">${strings.voiceAdding}</p>` : nothing}
        ${add.done ? html`<p class="notice ok" data-testid="voice-added">${add.done}</p>` : nothing}
      </div>
      ${add.error ? html`<p class="notice error" role="alert" id=${`${field}-error`} data-testid="voice-error">${add.error}</p>` : nothing}
    </form>`;
  }

  async #add(event: Event, what: Addition): Promise<void> {
    event.preventDefault();
    const client = this.client;
    const field = (event.target as HTMLFormElement).querySelector<HTMLInputElement>('input');
    if (client === null || field === null || this.adding[what].busy) return;
    const path = field.value.trim();
    if (path === '') {
      this.#setAdding(what, { ...IDLE, error: strings.voiceAddPathMissing });
      field.focus();
      return;
    }
    this.#setAdding(what, { ...IDLE, busy: true });
    try {
      const added = what === 'model' ? await client.addSpeechModel(path) : await client.addSpeechVoice(path);
      const done = (what === 'model' ? strings.voiceAddedModel : strings.voiceAddedVoice).replace('{id}', added.id);
      this.#setAdding(what, { ...IDLE, done });
      this.announcement = done;
      field.value = '';
      // The file may be one the catalogue offers: it is here now.
      await Promise.all([this.#overview.reload(), this.#catalogue.reload()]);
    } catch (error) {
      this.#setAdding(what, { ...IDLE, error: strings.voiceAddFailed.replace('{reason}', describeError(error)) });
    }
  }

  #setAdding(what: Addition, next: AddState): void {
    this.adding = { ...this.adding, [what]: next };
  }

  // ---- the catalogue -------------------------------------------------------------

  #renderCatalogue(): TemplateResult | typeof nothing {
    const catalogue = this.#catalogue.value;
    // A server with no catalogue offers nothing to download: the forms above are the way.
    if (catalogue === null) return nothing;
    return html`<section class="part" aria-labelledby="voice-catalogue-title" data-testid="voice-catalogue">
      <h4 id="voice-catalogue-title">${strings.voiceCatalogueTitle}</h4>
      <p class="muted small">${strings.voiceCatalogueLead}</p>
      ${this.#catalogue.status()}
      ${catalogue && catalogue.entries.length > 0
        ? html`<ul class="entries">${catalogue.entries.map((entry) => this.#renderEntry(entry))}</ul>`
        : nothing}
    </section>`;
  }

  /** The download an entry shows: the one started here, else the latest for it. */
  #downloadOf(entry: VoiceCatalogueEntry): DownloadStatus | undefined {
    const startedId = this.started.get(entry.id);
    if (startedId !== undefined) {
      const started = this.downloads.get(startedId);
      if (started) return started;
    }
    let found: DownloadStatus | undefined;
    for (const download of this.downloads.values()) if (download.catalogue === entry.id) found = download;
    return found;
  }

  #renderEntry(entry: VoiceCatalogueEntry): TemplateResult {
    const download = this.#downloadOf(entry);
    const stateName = download?.state ?? (entry.installed ? 'installed' : 'none');
    const refusal = this.refusals.get(entry.id);
    const stopped = download?.state === 'failed' || download?.state === 'interrupted';
    const offer = (download === undefined && !entry.installed) || stopped;
    const facts = [
      strings.localAbout.replace('{size}', formatBytes(entry.size_bytes)),
      languageName(entry.language),
      strings.localLicence.replace('{licence}', entry.licence),
    ];
    return html`<li class="entry" data-testid="voice-catalogue-entry" data-id=${entry.id} data-kind=${entry.kind} data-state=${stateName}>
      <div class="row-head">
        <div class="row-title">
          <strong>${entry.name}</strong>
          <span class="tag plain">${entry.kind === 'speech' ? strings.voiceKindSpeech : strings.voiceKindVoice}</span>
          ${entry.installed || download?.state === 'done' ? html`<span class="tag ok">${strings.localInstalled}</span>` : nothing}
        </div>
        ${offer
          ? html`<button type="button" class=${stopped ? 'primary' : ''} data-testid="voice-download" @click=${() => void this.#start(entry)}>
              ${stopped ? strings.localTryAgain : strings.localDownload}<span class="visually-hidden"> ${entry.name}</span>
            </button>`
          : nothing}
      </div>
      <p class="description">${entry.description}</p>
      <p class="hint">${facts.join(' · ')}</p>
      ${renderChecksums(entry)}
      ${refusal ? html`<p class="notice error" role="alert" data-testid="voice-error">${refusal}</p>` : nothing}
      ${download ? this.#renderDownload(entry, download) : nothing}
    </li>`;
  }

  #renderDownload(entry: VoiceCatalogueEntry, download: DownloadStatus): TemplateResult {
    switch (download.state) {
      case 'running':
      case 'checking': {
        const checking = download.state === 'checking';
        const starting = !checking && download.received === 0 && download.total === null;
        const text = checking ? strings.localChecking : starting ? strings.localStarting : progressText(download.received, download.total);
        const percent = checking ? 100 : progressPercent(download.received, download.total);
        return progressBar('voice-progress', strings.localDownloading.replace('{name}', entry.name), percent, text);
      }
      case 'done':
        return html`<p class="notice ok" data-testid="voice-ready">${strings.voiceReady.replace('{name}', entry.name)}</p>`;
      case 'failed':
      case 'interrupted':
        return html`<div class="notice error" role="alert" data-testid="voice-error">
          <p>${strings.localFailed.replace('{name}', entry.name).replace('{reason}', sentence(download.error ?? ''))}</p>
          ${download.total !== null && download.received > 0
            ? html`<p class="small">${progressText(download.received, download.total)}</p>`
            : nothing}
        </div>`;
    }
  }

  async #start(entry: VoiceCatalogueEntry): Promise<void> {
    const client = this.client;
    if (client === null) return;
    const refusals = new Map(this.refusals);
    refusals.delete(entry.id);
    this.refusals = refusals;
    try {
      const id = await client.startVoiceDownload(entry.id);
      this.started = new Map(this.started).set(entry.id, id);
      // "Starting…" until the server says how far it is.
      const placeholder: DownloadStatus = {
        id,
        catalogue: entry.id,
        name: entry.name,
        url: entry.files[0]?.url ?? '',
        received: 0,
        total: null,
        state: 'running',
        error: null,
        model: null,
      };
      this.#moving.add(id);
      this.downloads = new Map(this.downloads).set(id, placeholder);
      this.announcement = strings.localDownloading.replace('{name}', entry.name);
      this.#updatePolling();
    } catch (error) {
      if (error instanceof ApiError && error.status === 409) {
        // Already under way (another window started it): follow that one.
        await this.#readDownloads();
        return;
      }
      this.refusals = new Map(this.refusals).set(entry.id, describeError(error));
    }
  }

  /** Reads every download again: on arrival, then once a second while one moves. */
  async #readDownloads(): Promise<void> {
    const client = this.client;
    if (client === null || this.#reading) return;
    this.#reading = true;
    let list: DownloadStatus[];
    try {
      list = await client.voiceDownloads();
    } catch {
      // The next tick tries again (a server with no voice downloads has none to show).
      return;
    } finally {
      this.#reading = false;
    }
    const next = new Map(this.downloads);
    const finished: DownloadStatus[] = [];
    for (const download of list) {
      next.set(download.id, download);
      if (isActive(download)) this.#moving.add(download.id);
      else if (this.#moving.delete(download.id) && download.state === 'done') finished.push(download);
    }
    this.downloads = next;
    this.#updatePolling();
    for (const download of finished) this.#done(download);
  }

  /** A download watched here became a model or a voice: the overview and the catalogue say so. */
  #done(download: DownloadStatus): void {
    const catalogue = this.#catalogue.value;
    const entry = catalogue?.entries.find((e) => e.id === download.catalogue);
    if (catalogue && entry) {
      this.#catalogue.set({ entries: catalogue.entries.map((e) => (e === entry ? { ...e, installed: true } : e)) });
    }
    this.announcement = strings.voiceReady.replace('{name}', entry?.name ?? download.name);
    void this.#overview.reload();
    void this.#catalogue.reload();
  }

  #updatePolling(): void {
    const moving = [...this.downloads.values()].some(isActive);
    if (moving && this.#connected) {
      this.#timer ??= setInterval(() => void this.#readDownloads(), POLL_MS);
    } else {
      this.#stopPolling();
    }
  }

  #stopPolling(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

function renderModel(model: SpeechModel): TemplateResult {
  return html`<li data-testid="voice-model" data-id=${model.id} data-multilingual=${String(model.multilingual)}>
    <span class="row-title">
      <span class="model">${model.id}</span>
      <span class="tag plain">${model.multilingual ? strings.voiceMultilingual : strings.voiceEnglishOnly}</span>
    </span>
    <span class="muted small num">${formatBytes(model.size_bytes)}</span>
  </li>`;
}

function renderVoice(voice: SpeechVoice): TemplateResult {
  const rate = strings.voiceSampleRate.replace('{rate}', formatNumber(voice.sample_rate));
  return html`<li data-testid="voice-voice" data-id=${voice.id} data-language=${voice.language}>
    <span class="row-title">
      <span class="model">${voice.id}</span>
      <span class="tag plain">${languageName(voice.language)}</span>
    </span>
    <span class="muted small num">${rate} · ${formatBytes(voice.size_bytes)}</span>
  </li>`;
}

/**
 * An entry's checksums: each shortened in the summary, in full (with its file's name) when
 * opened, to compare with the publisher's.
 */
function renderChecksums(entry: VoiceCatalogueEntry): TemplateResult | typeof nothing {
  if (entry.files.length === 0) return nothing;
  const short = entry.files.map((file) => `${file.sha256.slice(0, 12)}…`).join(', ');
  const [before = '', after = ''] = strings.voiceChecksum.split('{sum}');
  return html`<details class="checksums small" data-testid="voice-checksums">
    <summary>${before}<code>${short}</code>${after}</summary>
    <ul>
      ${entry.files.map(
        (file) => html`<li><span class="file">${fileName(file.url)}</span> <code class="sum">${file.sha256}</code></li>`,
      )}
    </ul>
  </details>`;
}

/** The last part of a file's address: what it is called. */
function fileName(url: string): string {
  try {
    const path = new URL(url).pathname;
    return decodeURIComponent(path.slice(path.lastIndexOf('/') + 1)) || url;
  } catch {
    return url;
  }
}

/**
 * A language as the page's language names it, with its code: `American English (en_US)`;
 * `multilingual` in words; the code alone when the browser has no name for it.
 */
function languageName(code: string): string {
  if (code === 'multilingual') return strings.voiceMultilingual;
  try {
    const name = new Intl.DisplayNames([activeLocale().tag], { type: 'language' }).of(code.replace(/_/g, '-'));
    return name && name.toLowerCase() !== code.toLowerCase() ? `${name} (${code})` : code;
  } catch {
    return code;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-admin-voice': SkaldAdminVoice;
  }
}
