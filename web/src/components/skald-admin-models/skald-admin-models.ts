/**
 * Models and providers (§9, §16), for an administrator: each provider with
 * whether words sent to it stay on this computer, who connected and last
 * changed it, its models and which of them read pictures — which the
 * administrator may change; test it now (its model list is read again, live),
 * mark a provider on the home network trusted as local, set or remove its
 * key — which is never shown back, only whether one is set — or remove it.
 * Adding one offers the model servers running on this computer first.
 * Everyone whose turns may go to a provider finds a notice when it changes.
 *
 * The built-in provider (`local`) has a section of its own: its model files
 * with their size, quantization and origin, the disk they take, the one in
 * memory now; delete one, download a recommended one or import a file. The
 * memory search model (kind `embedding`) is listed as what it is — it finds
 * memories by meaning and is no chat model — without a chat model's details. A model
 * that made the engine's worker crash says so, with how and the worker's last
 * log lines; one Skald stopped starting after repeated crashes offers "Try
 * again".
 *
 * An OpenAI-compatible provider may also write speech down and read answers aloud
 * (§15): the models (and voice) it does so with, which reach a person only within
 * their tier and once they went on with the change. What this computer does with
 * voice has a section of its own, `<skald-admin-voice>`, after the built-in models.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import { live } from 'lit/directives/live.js';

import { ApiError } from '../../api/client.js';
import type { EngineCrash, LocalModel, LocalModelsReport, Model, Provider, ProviderModel, ProviderPatch } from '../../api/types.js';
import { ActionController } from '../../controllers/action-controller.js';
import { ResourceController } from '../../controllers/resource-controller.js';
import { strings } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import { formatNumber, formatTime } from '../../i18n/format.js';
import { plural } from '../../i18n/locale.js';
import type { Login } from '../../state/login.js';
import { describeSource, formatBytes, formatParameters, isEmbedding } from '../../state/local-models.js';
import { mayBeTrusted, mayReadPictures, modelsWithImages, providerPrivacy } from '../../state/providers.js';
import { controls, page } from '../../styles/controls.js';
import { trashIcon } from '../icons.js';
import '../skald-admin-voice/skald-admin-voice.js';
import type { SkaldConfirm } from '../skald-confirm/skald-confirm.js';
import '../skald-confirm/skald-confirm.js';
import '../skald-connect-model/skald-connect-model.js';
import type { SkaldLocalCatalogue } from '../skald-local-catalogue/skald-local-catalogue.js';
import '../skald-local-catalogue/skald-local-catalogue.js';
import { styles } from './skald-admin-models.styles.js';

/** Providers changed: the model list everyone sees may have changed too. */
export class ModelsChangedEvent extends Event {
  static readonly type = 'skald-models-changed';
  constructor() {
    super(ModelsChangedEvent.type, { bubbles: true, composed: true });
  }
}

/**
 * Test hooks: `[data-testid=provider-item]` (its `data-name`) with
 * `provider-test`, `provider-verdict`, `provider-trusted`, `model-images`
 * (a model's "reads pictures" box, its `data-model`), `provider-key`
 * (field) and `provider-key-save`, `provider-key-remove`,
 * `provider-delete`, `provider-image-model` (field), `provider-image-model-save`,
 * `provider-image-model-remove`, `provider-image-model-none`, `transcription-model` (field),
 * `transcription-model-save`, `transcription-model-remove`, `transcription-model-none`,
 * `speech-model` and `speech-voice` (fields), `speech-model-save`, `speech-model-remove`,
 * `speech-model-none`; `[data-testid=models-error]`; `[data-testid=local-model]`
 * (its `data-id`) with `local-model-delete`, `local-crash` (its
 * `data-given-up`), `local-crash-tail` and `local-crash-retry`, `[data-testid=local-disk]`,
 * `[data-testid=local-loaded]`, `<skald-local-catalogue>` and `<skald-admin-voice>`.
 *
 * @summary Providers: test, trust, which models read pictures and which makes them, speech models, key, remove; connect a new one.
 * @fires skald-models-changed - a provider was added, changed or removed
 */
@customElement('skald-admin-models')
export class SkaldAdminModels extends LitElement {
  static override styles = [controls, page, styles];

  @property({ attribute: false }) login: Login | null = null;
  @property({ attribute: false }) models: readonly Model[] = [];

  readonly #action = new ActionController(this);
  @state() private verdicts: ReadonlyMap<string, { readonly ok: boolean; readonly text: string }> = new Map();
  @state() private announcement = '';
  /** A model's "reads pictures" box as the administrator just set it, while the change goes to the server. */
  @state() private picturesPending: { readonly provider: string; readonly model: string; readonly images: boolean } | null = null;

  @query('skald-confirm') private confirm?: SkaldConfirm;
  @query('skald-local-catalogue') private catalogue?: SkaldLocalCatalogue;

  readonly #providers = new ResourceController<readonly Provider[]>(this, (signal) => {
    const client = this.login?.client;
    if (!client) return Promise.reject(new ApiError('network', '', 0));
    return client.providers(signal);
  });

  readonly #local = new ResourceController<LocalModelsReport>(this, (signal) => {
    const client = this.login?.client;
    if (!client) return Promise.reject(new ApiError('network', '', 0));
    return client.localModels(signal);
  });

  override render(): TemplateResult {
    // The built-in provider is managed in its own section, not as a server with an address and a key.
    const providers = this.#providers.value?.filter((provider) => provider.kind !== 'local');
    return html`
      <p class="lead">${strings.modelsLead}</p>
      ${this.#action.error ? html`<p class="notice error" role="alert" data-testid="models-error">${this.#action.error}</p>` : nothing}
      ${this.#providers.status()}
      ${providers?.length === 0 ? html`<p class="block">${strings.modelsNone}</p>` : nothing}
      ${providers ? html`<ul class="provider-list">${providers.map((provider) => this.#renderProvider(provider))}</ul>` : nothing}
      <section class="block" aria-labelledby="connect-title">
        <h3 id="connect-title">${strings.modelsAddTitle}</h3>
        <p class="muted small">${strings.modelsAddLead}</p>
        <skald-connect-model embedded .client=${this.login?.client ?? null} @skald-provider-added=${() => void this.#changed(strings.modelsAdded)}></skald-connect-model>
      </section>
      ${this.#renderLocal()}
      <skald-admin-voice .client=${this.login?.client ?? null}></skald-admin-voice>
      <p class="visually-hidden" role="status" aria-live="polite">${this.announcement}</p>
      <skald-confirm></skald-confirm>
    `;
  }

  #renderLocal(): TemplateResult {
    const report = this.#local.value;
    const loaded = report?.engine.loaded ?? null;
    const loadedName = loaded ? (report?.models.find((m) => m.id === loaded.model)?.name ?? loaded.model) : '';
    return html`<section class="block" aria-labelledby="local-title" data-testid="local-models">
      <h3 id="local-title">${strings.localModelsTitle}</h3>
      <p class="muted small">${strings.localModelsLead}</p>
      ${this.#local.status()}
      ${report
        ? html`<p class="small line" data-testid="local-disk">${strings.localDisk.replace('{size}', formatBytes(report.disk_bytes))}</p>
            <p class="small line" data-testid="local-loaded">
              ${loaded ? strings.localLoadedNow.replace('{name}', loadedName) : strings.localLoadedNone}
            </p>
            ${report.models.length === 0
              ? html`<p class="muted">${strings.localModelsNone}</p>`
              : html`<ul class="rows local-list">${report.models.map((m) =>
                  this.#renderLocalModel(m, loaded?.model === m.id, report.engine.crashes.find((c) => c.model === m.id)),
                )}</ul>`}`
        : nothing}
      <skald-local-catalogue
        embedded
        .client=${this.login?.client ?? null}
        .live=${this.login?.live ?? null}
        @skald-local-model-added=${() => void this.#localChanged(strings.localAdded)}
      ></skald-local-catalogue>
    </section>`;
  }

  #renderCrash(model: LocalModel, crash: EngineCrash): TemplateResult {
    const fill = (text: string): string =>
      text
        .replace('{name}', model.name)
        .replace('{count}', formatNumber(crash.count))
        .replace('{when}', formatTime(crash.last_at))
        .replace('{how}', crash.how);
    return html`<div class="notice ${crash.given_up ? 'error' : 'warn'}" role=${crash.given_up ? 'alert' : 'status'}
        data-testid="local-crash" data-given-up=${String(crash.given_up)}>
      <p>${fill(plural(crash.count, crash.given_up ? strings.localCrashGivenUp : strings.localCrashRecent))}</p>
      <p class="small">${strings.localCrashAdvice}</p>
      ${crash.stderr_tail.length > 0
        ? html`<details>
            <summary>${strings.localCrashTail}</summary>
            <pre class="small" data-testid="local-crash-tail">${crash.stderr_tail.join('\n')}</pre>
          </details>`
        : nothing}
      ${crash.given_up
        ? html`<button type="button" data-testid="local-crash-retry" ?disabled=${this.#action.busy}
            @click=${() => void this.#retryLocal(model)}>${strings.localCrashRetry}<span class="visually-hidden"> ${model.name}</span></button>`
        : nothing}
    </div>`;
  }

  async #retryLocal(model: LocalModel): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    if (await this.#run(() => client.retryLocalModel(model.id), strings.localCrashRetried.replace('{name}', model.name))) {
      await this.#local.reload();
    }
  }

  #renderLocalModel(model: LocalModel, loaded: boolean, crash: EngineCrash | undefined): TemplateResult {
    const search = isEmbedding(model);
    return html`<li data-testid="local-model" data-id=${model.id} data-kind=${model.kind}>
      <div class="row-head">
        <span class="row-title">
          <h4>${model.name}</h4>
          ${search ? html`<span class="tag plain" data-testid="local-model-search">${strings.localMemorySearch}</span>` : nothing}
          <span class="tag local">${strings.privacyLocal}</span>
          ${loaded ? html`<span class="tag plain">${strings.localLoaded}</span>` : nothing}
        </span>
        <button type="button" class="quiet danger-text" data-testid="local-model-delete" ?disabled=${this.#action.busy}
          @click=${() => void this.#deleteLocal(model)}>${trashIcon}${strings.delete}<span class="visually-hidden"> ${model.name}</span></button>
      </div>
      <dl class="facts small">
        ${search
          ? html`<dt>${strings.localUse}</dt>
              <dd data-testid="local-model-use">${strings.localSearchUse}</dd>`
          : html`<dt>${strings.localModelName}</dt>
              <dd><span class="model">local/${model.id}</span></dd>`}
        <dt>${strings.localSize}</dt>
        <dd>${formatBytes(model.file_size)}</dd>
        ${model.quantization && !search ? html`<dt>${strings.localQuantization}</dt><dd>${model.quantization}</dd>` : nothing}
        ${model.parameters ? html`<dt>${strings.localParameterCount}</dt><dd>${formatParameters(model.parameters)}</dd>` : nothing}
        <dt>${strings.localFrom}</dt>
        <dd>${describeSource(model.source)}</dd>
        <dt>${strings.localAddedBy}</dt>
        <dd>${strings.modelsByAt.replace('{name}', model.imported_by).replace('{time}', formatTime(model.imported_at))}</dd>
      </dl>
      ${crash ? this.#renderCrash(model, crash) : nothing}
    </li>`;
  }

  async #localChanged(done: string): Promise<void> {
    await Promise.all([this.#local.reload(), this.#changed(done)]);
  }

  async #deleteLocal(model: LocalModel): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    const confirmed = await this.confirm?.ask({
      title: strings.localDeleteTitle.replace('{name}', model.name),
      body: strings.localDeleteBody,
      action: strings.delete,
    });
    if (!confirmed) return;
    if (await this.#run(() => client.deleteLocalModel(model.id), strings.localDeleted.replace('{name}', model.name))) {
      await Promise.all([this.#local.reload(), this.catalogue?.reload()]);
    }
  }

  #renderProvider(provider: Provider): TemplateResult {
    const privacy = providerPrivacy(provider, this.models);
    const verdict = this.verdicts.get(provider.id);
    const id = (what: string): string => `${provider.id}-${what}`;
    return html`<li class="block" data-testid="provider-item" data-name=${provider.name}>
      <div class="row-head">
        <span class="row-title"><h3>${provider.name}</h3>
          <span class="tag ${privacy}">${privacy === 'local' ? strings.privacyLocal : strings.privacyRemote}</span>
        </span>
        <span class="actions">
          <button type="button" data-testid="provider-test" ?disabled=${this.#action.busy} @click=${() => void this.#test(provider)}>${strings.modelsTest}<span class="visually-hidden"> ${provider.name}</span></button>
          <button type="button" class="quiet danger-text" data-testid="provider-delete"
            ?disabled=${this.#action.busy} @click=${() => void this.#delete(provider)}>${trashIcon}${strings.delete}<span class="visually-hidden"> ${provider.name}</span></button>
        </span>
      </div>
      <div aria-live="polite">
        ${verdict ? html`<p class="notice ${verdict.ok ? 'ok' : 'error'}" data-testid="provider-verdict">${verdict.text}</p>` : nothing}
      </div>
      <dl class="facts small">
        <dt>${strings.modelsKind}</dt>
        <dd>${kindLabel(provider.kind)}</dd>
        <dt>${strings.modelsAddress}</dt>
        <dd><code>${provider.base_url}</code></dd>
        <dt>${strings.modelsWhere}</dt>
        <dd>${privacy === 'local' ? strings.privacyLocalLong : strings.privacyRemoteLong.replace('{name}', provider.name)}</dd>
        <dt>${strings.modelsConnectedBy}</dt>
        <dd>${strings.modelsByAt.replace('{name}', provider.created_by).replace('{time}', formatTime(provider.created_at))}</dd>
        <dt>${strings.modelsChangedBy}</dt>
        <dd>${strings.modelsByAt.replace('{name}', provider.updated_by).replace('{time}', formatTime(provider.updated_at))}</dd>
        <dt>${strings.modelsModels}</dt>
        <dd>${this.#renderModels(provider)}</dd>
      </dl>
      ${mayBeTrusted(provider) || provider.trusted_lan
        ? html`<div class="check trust">
            <input type="checkbox" id=${id('trusted')} data-testid="provider-trusted" .checked=${live(provider.trusted_lan)} ?disabled=${this.#action.busy}
              aria-describedby=${id('trusted-hint')} @change=${(e: Event) => void this.#trust(provider, (e.target as HTMLInputElement).checked)} />
            <label for=${id('trusted')}>${strings.modelsTrusted}</label>
          </div>
          <p class="hint" id=${id('trusted-hint')}>${strings.modelsTrustedHint}</p>`
        : nothing}
      ${provider.kind === 'openai' ? this.#renderPictureModel(provider) : nothing}
      ${provider.kind === 'openai' ? this.#renderVoiceModels(provider) : nothing}
      <form class="key" @submit=${(e: Event) => void this.#saveKey(e, provider)} novalidate>
        <div class="field">
          <label for=${id('key')}>${provider.has_key ? strings.modelsKeyReplace : strings.modelsKeySet}</label>
          <input id=${id('key')} data-testid="provider-key" type="password" autocomplete="off" spellcheck="false" aria-describedby=${id('key-hint')} />
          <p class="hint" id=${id('key-hint')}>${provider.has_key ? strings.modelsKeyIsSet : strings.modelsKeyNone}</p>
        </div>
        <div class="actions">
          <button type="submit" data-testid="provider-key-save" ?disabled=${this.#action.busy}>${strings.modelsKeySave}</button>
          ${provider.has_key
            ? html`<button type="button" class="quiet" data-testid="provider-key-remove" ?disabled=${this.#action.busy} @click=${() => void this.#removeKey(provider)}>
                ${strings.modelsKeyRemove}
              </button>`
            : nothing}
        </div>
      </form>
    </li>`;
  }

  /**
   * The model an OpenAI-compatible provider makes pictures with (`image_generate`), which
   * its model list may not name (image models are often left out of `/v1/models`).
   */
  #renderPictureModel(provider: Provider): TemplateResult {
    const id = (what: string): string => `${provider.id}-${what}`;
    return html`<form class="key" data-testid="provider-pictures" @submit=${(e: Event) => void this.#savePictureModel(e, provider)} novalidate>
      <div class="field">
        <label for=${id('image-model')}>${strings.modelsPictureModel}</label>
        <input id=${id('image-model')} data-testid="provider-image-model" autocomplete="off" spellcheck="false" maxlength="200"
          .value=${live(provider.image_model ?? '')}
          aria-describedby=${provider.image_model === null ? `${id('image-model-none')} ${id('image-model-hint')}` : id('image-model-hint')} />
        ${provider.image_model === null
          ? html`<p class="hint" id=${id('image-model-none')} data-testid="provider-image-model-none">${strings.modelsPictureModelNone.replace('{name}', provider.name)}</p>`
          : nothing}
        <p class="hint" id=${id('image-model-hint')}>${strings.modelsPictureModelHint}</p>
      </div>
      <div class="actions">
        <button type="submit" data-testid="provider-image-model-save" ?disabled=${this.#action.busy}>
          ${strings.modelsPictureModelSave}<span class="visually-hidden"> ${strings.modelsPictureModel}, ${provider.name}</span>
        </button>
        ${provider.image_model !== null
          ? html`<button type="button" class="quiet" data-testid="provider-image-model-remove" ?disabled=${this.#action.busy}
              @click=${() => void this.#setPictureModel(provider, null)}>${strings.modelsPictureModelRemove}</button>`
          : nothing}
      </div>
    </form>`;
  }

  /**
   * The models an OpenAI-compatible provider writes speech down with (`/v1/audio/transcriptions`)
   * and reads answers aloud with (`/v1/audio/speech`, in a voice of its own), which its model
   * list may not name either. A person's voice goes there only within their tier and once
   * they went on with the change; the copy says so.
   */
  #renderVoiceModels(provider: Provider): TemplateResult {
    const id = (what: string): string => `${provider.id}-${what}`;
    const privacy = id('voice-privacy');
    const heard = provider.transcription_model;
    const read = provider.speech_model;
    return html`<fieldset class="voice" data-testid="provider-voice">
      <legend>${strings.voiceProviderTitle.replace('{name}', provider.name)}</legend>
      <p class="hint">${strings.voiceProviderLead.replace('{name}', provider.name)}</p>
      <p class="hint" id=${privacy}>${strings.voiceProviderPrivacy.replace('{name}', provider.name)}</p>
      <form data-testid="provider-transcription" @submit=${(e: Event) => void this.#saveTranscriptionModel(e, provider)} novalidate>
        <div class="grid-fields">
          <div class="field">
            <label for=${id('transcription-model')}>${strings.voiceTranscriptionModel}</label>
            <input id=${id('transcription-model')} data-testid="transcription-model" autocomplete="off" spellcheck="false" maxlength="200"
              .value=${live(heard ?? '')}
              aria-describedby=${heard === null ? `${id('transcription-none')} ${privacy}` : privacy} />
            ${heard === null
              ? html`<p class="hint" id=${id('transcription-none')} data-testid="transcription-model-none">${strings.voiceTranscriptionNone}</p>`
              : nothing}
          </div>
        </div>
        <div class="actions">
          <button type="submit" data-testid="transcription-model-save" ?disabled=${this.#action.busy}>
            ${strings.voiceSave}<span class="visually-hidden"> ${strings.voiceTranscriptionModel}, ${provider.name}</span>
          </button>
          ${heard !== null
            ? html`<button type="button" class="quiet" data-testid="transcription-model-remove" ?disabled=${this.#action.busy}
                @click=${() => void this.#setVoiceModels(provider, { transcription_model: null })}>${strings.voiceTranscriptionRemove}</button>`
            : nothing}
        </div>
      </form>
      <form data-testid="provider-speech" @submit=${(e: Event) => void this.#saveSpeechModel(e, provider)} novalidate>
        <div class="grid-fields">
          <div class="field">
            <label for=${id('speech-model')}>${strings.voiceSpeechModel}</label>
            <input id=${id('speech-model')} name="model" data-testid="speech-model" autocomplete="off" spellcheck="false" maxlength="200"
              .value=${live(read ?? '')}
              aria-describedby=${read === null ? `${id('speech-none')} ${privacy}` : privacy} />
            ${read === null ? html`<p class="hint" id=${id('speech-none')} data-testid="speech-model-none">${strings.voiceSpeechNone}</p>` : nothing}
          </div>
          <div class="field">
            <label for=${id('speech-voice')}>${strings.voiceSpeechVoice}</label>
            <input id=${id('speech-voice')} name="voice" data-testid="speech-voice" autocomplete="off" spellcheck="false" maxlength="100"
              .value=${live(provider.speech_voice ?? '')} aria-describedby=${id('speech-voice-hint')} />
            <p class="hint" id=${id('speech-voice-hint')}>${strings.voiceSpeechVoiceHint}</p>
          </div>
        </div>
        <div class="actions">
          <button type="submit" data-testid="speech-model-save" ?disabled=${this.#action.busy}>
            ${strings.voiceSave}<span class="visually-hidden"> ${strings.voiceSpeechModel}, ${provider.name}</span>
          </button>
          ${read !== null || provider.speech_voice !== null
            ? html`<button type="button" class="quiet" data-testid="speech-model-remove" ?disabled=${this.#action.busy}
                @click=${() => void this.#setVoiceModels(provider, { speech_model: null, speech_voice: null })}>${strings.voiceSpeechRemove}</button>`
            : nothing}
        </div>
      </form>
    </fieldset>`;
  }

  /** Each model with its strength and, where the administrator may say so, whether it reads pictures. */
  #renderModels(provider: Provider): TemplateResult | string {
    if (provider.models.length === 0) return strings.modelsNoModels;
    if (!mayReadPictures(provider)) {
      return html`${provider.models.map((m, i) => html`${i > 0 ? ', ' : ''}<span class="model">${m.model_id}</span> <span class="muted">(${m.strength})</span>`)}`;
    }
    const hint = `${provider.id}-images-hint`;
    return html`<ul class="provider-models">
        ${provider.models.map(
          (m, i) => html`<li>
            <span><span class="model">${m.model_id}</span> <span class="muted">(${m.strength})</span></span>
            <span class="check">
              <input type="checkbox" id=${`${provider.id}-images-${i}`} data-testid="model-images" data-model=${m.model_id}
                .checked=${live(this.#readsPictures(provider, m))} ?disabled=${this.#action.busy}
                aria-label=${strings.modelsImagesOf.replace('{model}', m.model_id)} aria-describedby=${hint}
                @change=${(e: Event) => void this.#images(provider, m, (e.target as HTMLInputElement).checked)} />
              <label for=${`${provider.id}-images-${i}`}>${strings.modelsImages}</label>
            </span>
          </li>`,
        )}
      </ul>
      <p class="hint" id=${hint}>${strings.modelsImagesHint}</p>`;
  }

  #readsPictures(provider: Provider, model: ProviderModel): boolean {
    const pending = this.picturesPending;
    return pending?.provider === provider.id && pending.model === model.model_id ? pending.images : model.images;
  }

  #run(call: () => Promise<unknown>, done: string): Promise<boolean> {
    return this.#action.run(call, { done: () => this.#changed(done) });
  }

  async #changed(done: string): Promise<void> {
    this.announcement = done;
    this.dispatchEvent(new ModelsChangedEvent());
    await this.#providers.reload();
  }

  async #test(provider: Provider): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    await this.#action.hold(async () => {
      const verdicts = new Map(this.verdicts);
      verdicts.delete(provider.id);
      this.verdicts = verdicts;
      try {
        const n = await client.refreshProvider(provider.id);
        const text = plural(n, strings.modelsTestOk).replace('{name}', provider.name).replace('{n}', formatNumber(n));
        this.verdicts = new Map(this.verdicts).set(provider.id, { ok: true, text });
        await this.#changed(text);
      } catch (error) {
        this.verdicts = new Map(this.verdicts).set(provider.id, { ok: false, text: strings.connectFailed.replace('{reason}', describeError(error)) });
      }
    });
  }

  async #trust(provider: Provider, trusted: boolean): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    if (trusted) {
      const confirmed = await this.confirm?.ask({
        title: strings.modelsTrustTitle.replace('{name}', provider.name),
        body: strings.modelsTrustBody.replace('{name}', provider.name),
        action: strings.modelsTrustAction,
      });
      if (!confirmed) {
        // The box snaps back to what the server holds.
        this.requestUpdate();
        return;
      }
    }
    await this.#run(
      () => client.updateProvider(provider.id, { trusted_lan: trusted }),
      (trusted ? strings.modelsTrustedOn : strings.modelsTrustedOff).replace('{name}', provider.name),
    );
  }

  async #images(provider: Provider, model: ProviderModel, images: boolean): Promise<void> {
    const client = this.login?.client;
    if (!client || this.#action.busy) return;
    // The box keeps its new state while the change goes; once the list is read again it
    // shows what the server holds, or, after a refusal, goes back to it.
    this.picturesPending = { provider: provider.id, model: model.model_id, images };
    try {
      await this.#run(
        () => client.updateProvider(provider.id, { models: modelsWithImages(provider.models, model.model_id, images) }),
        (images ? strings.modelsImagesOn : strings.modelsImagesOff).replace('{model}', model.model_id),
      );
    } finally {
      this.picturesPending = null;
    }
  }

  async #saveKey(event: Event, provider: Provider): Promise<void> {
    event.preventDefault();
    const client = this.login?.client;
    const field = (event.target as HTMLFormElement).querySelector<HTMLInputElement>('input');
    const key = field?.value.trim() ?? '';
    if (!client || key === '') return;
    if (field) field.value = '';
    await this.#run(() => client.updateProvider(provider.id, { api_key: key }), strings.modelsKeySaved.replace('{name}', provider.name));
  }

  async #savePictureModel(event: Event, provider: Provider): Promise<void> {
    event.preventDefault();
    const field = (event.target as HTMLFormElement).querySelector<HTMLInputElement>('input');
    const model = field?.value.trim() ?? '';
    await this.#setPictureModel(provider, model === '' ? null : model);
  }

  async #setPictureModel(provider: Provider, model: string | null): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    const done =
      model === null
        ? strings.modelsPictureModelRemoved.replace('{name}', provider.name)
        : strings.modelsPictureModelSaved.replace('{name}', provider.name).replace('{model}', model);
    await this.#run(() => client.updateProvider(provider.id, { image_model: model }), done);
  }

  async #saveTranscriptionModel(event: Event, provider: Provider): Promise<void> {
    event.preventDefault();
    const field = (event.target as HTMLFormElement).querySelector<HTMLInputElement>('input');
    await this.#setVoiceModels(provider, { transcription_model: orNull(field?.value) });
  }

  async #saveSpeechModel(event: Event, provider: Provider): Promise<void> {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    const value = (name: string): string | null => orNull(form.querySelector<HTMLInputElement>(`input[name=${name}]`)?.value);
    await this.#setVoiceModels(provider, { speech_model: value('model'), speech_voice: value('voice') });
  }

  /** Sets (or, with `null`, removes) what a provider writes speech down and reads aloud with. */
  async #setVoiceModels(
    provider: Provider,
    change: Pick<ProviderPatch, 'transcription_model'> | Pick<ProviderPatch, 'speech_model' | 'speech_voice'>,
  ): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    const name = (text: string, model: string): string => text.replace('{name}', provider.name).replace('{model}', model);
    const done =
      'transcription_model' in change
        ? change.transcription_model
          ? name(strings.voiceTranscriptionSaved, change.transcription_model)
          : name(strings.voiceTranscriptionRemoved, '')
        : 'speech_model' in change && change.speech_model
          ? name(strings.voiceSpeechSaved, change.speech_model)
          : name(strings.voiceSpeechRemoved, '');
    await this.#run(() => client.updateProvider(provider.id, change), done);
  }

  async #removeKey(provider: Provider): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    await this.#run(() => client.updateProvider(provider.id, { api_key: null }), strings.modelsKeyRemoved.replace('{name}', provider.name));
  }

  async #delete(provider: Provider): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    const confirmed = await this.confirm?.ask({
      title: strings.modelsDeleteTitle.replace('{name}', provider.name),
      body: strings.modelsDeleteBody,
      action: strings.delete,
    });
    if (confirmed) await this.#run(() => client.deleteProvider(provider.id), strings.modelsDeleted.replace('{name}', provider.name));
  }
}

/** A field's words, trimmed; `null` (none) when there are none. */
function orNull(value: string | undefined): string | null {
  const trimmed = value?.trim() ?? '';
  return trimmed === '' ? null : trimmed;
}

function kindLabel(kind: string): string {
  switch (kind) {
    case 'openai':
      return strings.kindOpenai;
    case 'anthropic':
      return strings.kindAnthropic;
    case 'ollama':
      return strings.kindOllama;
    default:
      return kind;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-admin-models': SkaldAdminModels;
  }
  interface HTMLElementEventMap {
    [ModelsChangedEvent.type]: ModelsChangedEvent;
  }
}
