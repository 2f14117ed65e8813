/**
 * Templates from tool servers (MCP prompts, §12.1), above the composer: the
 * prompts of the tool servers the person is offered, listed once when the
 * conversation opens and hidden when there are none. Choosing one asks for its
 * arguments, then puts its text in the composer for the person to read, edit
 * and send themselves: nothing is sent by choosing.
 */
import { LitElement, css, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';

import type { ToolPrompt } from '../../api/types.js';
import { strings } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import type { Login } from '../../state/login.js';
import { controls } from '../../styles/controls.js';
import { UsePromptEvent } from '../events.js';

/**
 * Test hooks: `[data-testid=tool-prompts]` (the disclosure), `[data-testid=tool-prompt]`
 * (each, its `data-name`), `[data-testid=tool-prompt-form]` with an input per argument
 * (its `name`) and `tool-prompt-use`.
 *
 * @summary The tool servers' prompts, as templates for the composer.
 * @fires skald-use-prompt - a prompt's text, for the composer
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
    `,
  ];

  @property({ attribute: false }) login: Login | null = null;

  @state() private prompts: readonly ToolPrompt[] = [];
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
    if (!client) return;
    try {
      this.prompts = await client.toolPrompts();
    } catch {
      // No prompts to offer: the composer works the same without them.
      this.prompts = [];
    }
  }

  override render(): TemplateResult | typeof nothing {
    if (this.prompts.length === 0) return nothing;
    const chosen = this.chosen;
    return html`<details data-testid="tool-prompts">
      <summary>${strings.toolPromptsTitle}</summary>
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
    </details>`;
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
