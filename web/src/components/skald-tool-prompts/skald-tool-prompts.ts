/**
 * Templates and attachments from tool servers (MCP prompts and resources,
 * §12.1), above the composer: what the tool servers the person is offered
 * list, read once when the conversation opens and hidden when there is
 * nothing. Choosing a prompt asks for its arguments, then puts its text in
 * the composer for the person to read, edit and send themselves: nothing is
 * sent by choosing. Resources ticked go with the next message, as outside
 * content (§8.4).
 */
import { LitElement, css, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';

import type { AttachedResource, ToolPrompt, ToolResource } from '../../api/types.js';
import { strings } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import type { Login } from '../../state/login.js';
import { controls } from '../../styles/controls.js';
import { AttachEvent, UsePromptEvent } from '../events.js';

/**
 * Test hooks: `[data-testid=tool-prompts]` (the disclosure), `[data-testid=tool-prompt]`
 * (each, its `data-name`), `[data-testid=tool-prompt-form]` with an input per argument
 * (its `name`) and `tool-prompt-use`; `[data-testid=tool-resource]` (each checkbox, its
 * `data-uri`).
 *
 * @summary The tool servers' prompts and resources, for the composer.
 * @fires skald-use-prompt - a prompt's text, for the composer
 * @fires skald-attach - the resources ticked for the next message
 */
@customElement('skald-tool-prompts')
export class SkaldToolPrompts extends LitElement {
  static override styles = [
    controls,
    css`
      :host {
        display: block;
        margin-bottom: var(--skald-space-2);
      }
      ul {
        list-style: none;
        margin: var(--skald-space-2) 0;
        padding: 0;
        display: flex;
        flex-wrap: wrap;
        gap: var(--skald-space-2);
      }
      form {
        display: flex;
        flex-direction: column;
        gap: var(--skald-space-2);
        margin: var(--skald-space-2) 0;
      }
      .field {
        display: flex;
        flex-direction: column;
        gap: var(--skald-space-1);
      }
      .actions {
        display: flex;
        gap: var(--skald-space-2);
      }
      /* Its own scroll, so a long list never squeezes the conversation above it. */
      .body {
        max-height: min(40vh, 18rem);
        overflow-y: auto;
        padding: 0 var(--skald-space-1);
      }
      .body:focus-visible {
        outline: 2px solid var(--skald-accent);
        outline-offset: 2px;
      }
      .resources {
        display: flex;
        flex-direction: column;
        gap: var(--skald-space-1);
        margin: var(--skald-space-2) 0;
      }
    `,
  ];

  @property({ attribute: false }) login: Login | null = null;
  /** The resources ticked for the next message (the chat clears them once sent). */
  @property({ attribute: false }) attached: readonly AttachedResource[] = [];

  @state() private prompts: readonly ToolPrompt[] = [];
  @state() private resources: readonly ToolResource[] = [];
  @state() private chosen: ToolPrompt | null = null;
  @state() private values: Record<string, string> = {};
  @state() private busy = false;
  @state() private error = '';
  #loadedFor: Login | null = null;

  protected override willUpdate(): void {
    if (this.login !== this.#loadedFor) {
      this.#loadedFor = this.login;
      void this.#load();
    }
  }

  async #load(): Promise<void> {
    const client = this.login?.client;
    this.prompts = [];
    this.resources = [];
    if (!client) return;
    // Nothing to offer on failure: the composer works the same without them.
    const [prompts, resources] = await Promise.all([
      client.toolPrompts().catch(() => []),
      client.toolResources().catch(() => []),
    ]);
    this.prompts = prompts;
    this.resources = resources;
  }

  override render(): TemplateResult | typeof nothing {
    if (this.prompts.length === 0 && this.resources.length === 0) return nothing;
    const chosen = this.chosen;
    const ticked = this.attached.length;
    return html`<details data-testid="tool-prompts">
      <summary>
        ${strings.toolPromptsTitle}${ticked > 0 ? html` · <span data-testid="attached-count">${strings.toolResourcesTicked.replace('{count}', String(ticked))}</span>` : nothing}
      </summary>
      <div class="body" tabindex="0" role="group" aria-label=${strings.toolPromptsTitle}>
      ${this.resources.length > 0 ? this.#renderResources() : nothing}
      <ul>
        ${this.prompts.map(
          (prompt) => html`<li>
            <button
              type="button"
              data-testid="tool-prompt"
              data-name=${prompt.name}
              title=${prompt.description ?? ''}
              aria-pressed=${chosen === prompt ? 'true' : 'false'}
              @click=${() => this.#choose(prompt)}
            >
              ${prompt.title ?? prompt.name} <span class="hint">· ${prompt.server}</span>
            </button>
          </li>`,
        )}
      </ul>
      ${chosen ? this.#renderForm(chosen) : nothing}
      </div>
    </details>`;
  }

  #renderResources(): TemplateResult {
    const isTicked = (r: ToolResource) => this.attached.some((a) => a.server === r.server_id && a.uri === r.uri);
    return html`<fieldset class="resources">
      <legend>${strings.toolResourcesTitle}</legend>
      <p class="hint">${strings.toolResourcesHint}</p>
      ${this.resources.map(
        (resource) => html`<label class="checkbox" title=${resource.description ?? resource.uri}>
          <input
            type="checkbox"
            data-testid="tool-resource"
            data-uri=${resource.uri}
            .checked=${isTicked(resource)}
            @change=${(e: Event) => this.#tick(resource, (e.target as HTMLInputElement).checked)}
          />
          ${resource.title ?? resource.name} <span class="hint">· ${resource.server}</span>
        </label>`,
      )}
    </fieldset>`;
  }

  #tick(resource: ToolResource, on: boolean): void {
    const others = this.attached.filter((a) => !(a.server === resource.server_id && a.uri === resource.uri));
    const next = on ? [...others, { server: resource.server_id, uri: resource.uri }] : others;
    this.dispatchEvent(new AttachEvent(next));
  }

  #renderForm(prompt: ToolPrompt): TemplateResult {
    return html`<form data-testid="tool-prompt-form" @submit=${this.#use}>
      ${prompt.description ? html`<p class="hint">${prompt.description}</p>` : nothing}
      ${prompt.arguments.map(
        (argument) => html`<div class="field">
          <label for="prompt-${argument.name}"
            >${argument.name}${argument.required ? html` <span class="hint">(${strings.formRequired})</span>` : nothing}</label
          >
          <input
            id="prompt-${argument.name}"
            name=${argument.name}
            autocomplete="off"
            ?required=${argument.required}
            .value=${this.values[argument.name] ?? ''}
            @input=${(e: Event) => (this.values = { ...this.values, [argument.name]: (e.target as HTMLInputElement).value })}
          />
          ${argument.description ? html`<span class="hint">${argument.description}</span>` : nothing}
        </div>`,
      )}
      ${this.error ? html`<p class="notice error" role="alert">${this.error}</p>` : nothing}
      <div class="actions">
        <button type="submit" class="primary" data-testid="tool-prompt-use" ?disabled=${this.busy}>${strings.toolPromptsUse}</button>
        <button type="button" @click=${() => (this.chosen = null)}>${strings.cancel}</button>
      </div>
    </form>`;
  }

  #choose(prompt: ToolPrompt): void {
    this.chosen = prompt;
    this.values = {};
    this.error = '';
  }

  async #use(event: Event): Promise<void> {
    event.preventDefault();
    const client = this.login?.client;
    const prompt = this.chosen;
    if (!client || !prompt || this.busy) return;
    const missing = prompt.arguments.find((a) => a.required && (this.values[a.name] ?? '').trim() === '');
    if (missing) {
      this.error = strings.toolPromptsMissing.replace('{name}', missing.name);
      return;
    }
    const filled = Object.fromEntries(Object.entries(this.values).filter(([, v]) => v.trim() !== ''));
    this.busy = true;
    this.error = '';
    try {
      const text = await client.fillToolPrompt(prompt.server_id, prompt.name, filled);
      this.dispatchEvent(new UsePromptEvent(text));
      this.chosen = null;
      this.values = {};
    } catch (error) {
      this.error = describeError(error);
    } finally {
      this.busy = false;
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-tool-prompts': SkaldToolPrompts;
  }
}
