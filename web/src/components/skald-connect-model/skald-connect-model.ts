/**
 * Connecting a model (§9), the last step of setup: the model built into
 * Skald is offered first (download one, or import a file), then model
 * servers found on this computer (their words stay here too), then any
 * provider by address and key. Connecting reads the provider's model list
 * live, so the verdict is real: "connected, N models", or the provider's
 * own reason it refused.
 *
 * Owns: the administrator's session calls to detect and add providers.
 * Never: keeps an API key after the call returns.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';

import type { ApiClient, NewProvider } from '../../api/client.js';
import type { DetectedServer } from '../../api/types.js';
import { strings } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import { formatNumber } from '../../i18n/format.js';
import { plural } from '../../i18n/locale.js';
import { controls } from '../../styles/controls.js';
import { stepBlocks } from '../../styles/step-blocks.js';
import { formText } from '../form.js';
import '../skald-local-catalogue/skald-local-catalogue.js';
import type { LocalModelAddedEvent } from '../skald-local-catalogue/skald-local-catalogue.js';
import { styles } from './skald-connect-model.styles.js';

/** The step is over: `connected` says how many providers (the built-in one included) were connected. */
export class ModelStepDoneEvent extends Event {
  static readonly type = 'skald-model-step-done';
  constructor(readonly connected: number) {
    super(ModelStepDoneEvent.type, { bubbles: true, composed: true });
  }
}

/** A provider was connected (its id and how many models it listed). */
export class ProviderAddedEvent extends Event {
  static readonly type = 'skald-provider-added';
  constructor(readonly id: string) {
    super(ProviderAddedEvent.type, { bubbles: true, composed: true });
  }
}

type Verdict = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly text: string };

const KINDS = [
  { kind: 'openai', base: 'https://api.openai.com/v1' },
  { kind: 'anthropic', base: 'https://api.anthropic.com/v1' },
  { kind: 'ollama', base: 'http://127.0.0.1:11434' },
] as const;

/**
 * Test hooks: `<skald-local-catalogue>` (setup only),
 * `[data-testid=provider-form]` (fields `kind`, `name`, `base_url`,
 * `api_key`), `[data-testid=verdict]` with `data-ok`.
 *
 * @summary Offers the built-in model, detects local model servers and connects providers, live.
 * @fires skald-model-step-done - the person continues (or skips); not in `embedded` use
 * @fires skald-provider-added - a provider was connected
 */
@customElement('skald-connect-model')
export class SkaldConnectModel extends LitElement {
  static override styles = [controls, stepBlocks, styles];

  /** An administrator's session client. */
  @property({ attribute: false }) client: ApiClient | null = null;
  /** On the administrator's models page: no "continue" step, and headings one level lower. */
  @property({ type: Boolean }) embedded = false;

  @state() private detected: readonly DetectedServer[] | null = null;
  @state() private connected: readonly string[] = [];
  @state() private verdict: Verdict | null = null;
  @state() private busy = false;
  @state() private kind: string = 'openai';
  @state() private baseUrl: string = KINDS[0].base;

  override connectedCallback(): void {
    super.connectedCallback();
    void this.#detect();
  }

  async #detect(): Promise<void> {
    if (this.client === null) return;
    try {
      this.detected = await this.client.detectProviders();
    } catch {
      this.detected = [];
    }
  }

  override render(): TemplateResult {
    // What was found on this computer comes first; the built-in model is the fallback
    // when nothing was (and a choice further down when something was).
    const found = this.detected !== null && this.detected.length > 0;
    const builtIn = this.embedded
      ? nothing
      : html`<skald-local-catalogue
          .client=${this.client}
          ?alternative=${found}
          @skald-local-model-added=${this.#localAdded}
        ></skald-local-catalogue>`;
    return html`
      <section aria-labelledby="local-title" class="block">
        <h2 id="local-title" aria-level=${this.embedded ? '4' : '2'}>${strings.connectLocalTitle}</h2>
        ${this.detected === null
          ? html`<p class="hint" role="status">${strings.connectDetecting}</p>`
          : this.detected.length === 0
            ? html`<p class="hint">${strings.connectNoneFound}</p>`
            : html`<ul class="found" data-testid="detected">
                ${this.detected.map(
                  (server) => html`<li>
                    <div>
                      <strong>${server.label}</strong>
                      <span class="hint">${server.base_url} · ${plural(server.models.length, strings.connectModelCount).replace('{n}', formatNumber(server.models.length))}</span>
                    </div>
                    <button
                      type="button"
                      class=${this.connected.length === 0 ? 'primary' : ''}
                      ?disabled=${this.busy || this.connected.includes(providerName(server.label))}
                      @click=${() => void this.#connect({ name: providerName(server.label), kind: server.kind, base_url: server.base_url })}
                    >
                      ${this.connected.includes(providerName(server.label)) ? strings.connectDone : strings.connectThis}
                    </button>
                  </li>`,
                )}
              </ul>`}
      </section>
      ${this.detected !== null && !found ? builtIn : nothing}
      <section aria-labelledby="remote-title" class="block">
        <h2 id="remote-title" aria-level=${this.embedded ? '4' : '2'}>${strings.connectRemoteTitle}</h2>
        <form data-testid="provider-form" @submit=${this.#submit} novalidate>
          <div class="field">
            <label for="kind">${strings.connectKind}</label>
            <select id="kind" name="kind" .value=${this.kind} @change=${this.#kindChanged}>
              <option value="openai">${strings.kindOpenai}</option>
              <option value="anthropic">${strings.kindAnthropic}</option>
              <option value="ollama">${strings.kindOllama}</option>
            </select>
          </div>
          <div class="row">
            <div class="field">
              <label for="name">${strings.connectName}</label>
              <input id="name" name="name" .value=${this.kind} aria-describedby="name-hint" spellcheck="false" />
              <p class="hint" id="name-hint">${strings.connectNameHint}</p>
            </div>
            <div class="field grow">
              <label for="base_url">${strings.connectUrl}</label>
              <input id="base_url" name="base_url" type="url" .value=${this.baseUrl} spellcheck="false" />
            </div>
          </div>
          <div class="field">
            <label for="api_key">${strings.connectKey}</label>
            <input id="api_key" name="api_key" type="password" autocomplete="off" spellcheck="false" aria-describedby="key-hint" />
            <p class="hint" id="key-hint">${strings.connectKeyHint}</p>
          </div>
          <div class="actions">
            <button type="submit" ?disabled=${this.busy}>${this.busy ? strings.connectTesting : strings.connectTest}</button>
          </div>
        </form>
      </section>
      ${found ? builtIn : nothing}
      <div aria-live="polite">
        ${this.verdict === null
          ? nothing
          : html`<p class="notice ${this.verdict.ok ? 'ok' : 'error'}" data-testid="verdict" data-ok=${String(this.verdict.ok)} tabindex="-1">
              ${this.verdict.text}
            </p>`}
      </div>
      ${this.embedded
        ? nothing
        : html`<div class="actions finish">
        <button
          type="button"
          class=${this.connected.length > 0 ? 'primary' : ''}
          data-testid="model-step-done"
          @click=${() => this.dispatchEvent(new ModelStepDoneEvent(this.connected.length))}
        >
          ${this.connected.length > 0 ? strings.connectFinish : strings.connectSkip}
        </button>
      </div>`}
    `;
  }

  /**
   * A built-in model is ready: the step goes on as after connecting a provider. The memory
   * search model answers nobody, so it connects nothing (its card says it is ready).
   */
  #localAdded(event: LocalModelAddedEvent): void {
    if (event.kind === 'embedding') return;
    if (!this.connected.includes('local')) this.connected = [...this.connected, 'local'];
    this.verdict = { ok: true, text: strings.localConnected.replace('{name}', event.label).replace('{model}', event.model) };
    this.#focusNext();
  }

  /**
   * A model is connected and the button pressed is now disabled: the focus goes on to
   * Continue (in setup) or to the verdict (on the Models page) instead of to the page.
   */
  #focusNext(): void {
    void this.updateComplete.then(() => {
      const next = this.renderRoot.querySelector<HTMLElement>(this.embedded ? '[data-testid=verdict]' : '[data-testid=model-step-done]');
      next?.focus();
    });
  }

  #kindChanged(event: Event): void {
    const kind = (event.target as HTMLSelectElement).value;
    const previousDefault = KINDS.find((k) => k.kind === this.kind)?.base;
    this.kind = kind;
    if (this.baseUrl === previousDefault || this.baseUrl === '') {
      this.baseUrl = KINDS.find((k) => k.kind === kind)?.base ?? '';
    }
  }

  async #submit(event: Event): Promise<void> {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    const data = new FormData(form);
    const key = formText(data, 'api_key').trim();
    const provider: NewProvider = {
      name: formText(data, 'name').trim(),
      kind: formText(data, 'kind', 'openai'),
      base_url: formText(data, 'base_url').trim(),
      ...(key === '' ? {} : { api_key: key }),
    };
    this.baseUrl = provider.base_url;
    if (await this.#connect(provider)) {
      const keyField = form.querySelector<HTMLInputElement>('#api_key');
      if (keyField) keyField.value = '';
    }
  }

  async #connect(provider: NewProvider): Promise<boolean> {
    if (this.client === null || this.busy) return false;
    this.busy = true;
    this.verdict = null;
    try {
      const added = await this.client.addProvider(provider);
      const names = added.models.map((m) => m.model_id);
      const shown = names.slice(0, 5).join(', ') + (names.length > 5 ? '…' : '');
      this.connected = [...this.connected, provider.name];
      this.dispatchEvent(new ProviderAddedEvent(added.id));
      this.verdict = {
        ok: true,
        text: plural(names.length, strings.connectOk)
          .replace('{name}', provider.name)
          .replace('{n}', formatNumber(names.length))
          .replace('{models}', shown),
      };
      this.#focusNext();
      return true;
    } catch (error) {
      this.verdict = { ok: false, text: strings.connectFailed.replace('{reason}', describeError(error)) };
      return false;
    } finally {
      this.busy = false;
    }
  }
}

/** A provider name the server accepts (letters, digits, `.`, `_`, `-`), from a label. */
export function providerName(label: string): string {
  const name = label
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return name === '' ? 'local' : name;
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-connect-model': SkaldConnectModel;
  }
  interface HTMLElementEventMap {
    [ModelStepDoneEvent.type]: ModelStepDoneEvent;
    [ProviderAddedEvent.type]: ProviderAddedEvent;
  }
}
