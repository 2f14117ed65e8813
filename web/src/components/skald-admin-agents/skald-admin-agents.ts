/**
 * Agents (§8.7), for an administrator: every agent with what it may use,
 * the model it prefers and who last changed it; the folders that hold no
 * usable agent, with the reason (they are skipped everywhere until fixed);
 * and an editor for an agent's two files, `meta.json` and `AGENT.md`. The
 * server refuses a definition that would not load; everyone else finds a
 * notice of the change.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';

import { ApiError } from '../../api/client.js';
import { isRecord, type Agent, type AgentList } from '../../api/types.js';
import { ResourceController } from '../../controllers/resource-controller.js';
import { strings } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import { formatTime } from '../../i18n/format.js';
import type { Login } from '../../state/login.js';
import { controls, page } from '../../styles/controls.js';
import { closeIcon, pencilIcon } from '../icons.js';
import { styles } from './skald-admin-agents.styles.js';

interface Draft {
  readonly id: string;
  readonly meta: string;
  readonly prompt: string;
}

/**
 * Test hooks: `[data-testid=agent-item]` (its `data-id`) with `agent-edit`;
 * `[data-testid=agent-problem]` (its `data-id`); the editor
 * `[data-testid=agent-form]` with `#agent-meta`, `#agent-prompt` and
 * `agent-save`.
 *
 * @summary Agents: list with validity problems, edit.
 */
@customElement('skald-admin-agents')
export class SkaldAdminAgents extends LitElement {
  static override styles = [controls, page, styles];

  @property({ attribute: false }) login: Login | null = null;

  @state() private draft: Draft | null = null;
  @state() private busy = false;
  @state() private error = '';
  @state() private announcement = '';

  readonly #agents = new ResourceController<AgentList>(this, (signal) => {
    const client = this.login?.client;
    if (!client) return Promise.reject(new ApiError('network', '', 0));
    return client.agents(signal);
  });

  override render(): TemplateResult {
    const list = this.#agents.value;
    return html`
      <p class="lead">${strings.agentsLead}</p>
      ${this.error ? html`<p class="notice error" role="alert" data-testid="agents-error">${this.error}</p>` : nothing}
      ${this.#agents.status()}
      ${list && list.problems.length > 0
        ? html`<section class="block problems" aria-labelledby="problems-title">
            <h3 id="problems-title">${strings.agentsProblemsTitle}</h3>
            <p>${strings.agentsProblemsLead}</p>
            <ul class="rows">
              ${list.problems.map(
                (problem) => html`<li data-testid="agent-problem" data-id=${problem.id}>
                  <span class="row-title"><code>${problem.id}</code><span class="tag bad">${strings.agentsNotUsable}</span></span>
                  <p class="small">${problem.error}</p>
                </li>`,
              )}
            </ul>
          </section>`
        : nothing}
      ${list ? html`<ul class="agent-list">${list.agents.map((agent) => this.#renderAgent(agent))}</ul>` : nothing}
      <p class="visually-hidden" role="status" aria-live="polite">${this.announcement}</p>
    `;
  }

  #renderAgent(agent: Agent): TemplateResult {
    const editing = this.draft?.id === agent.id;
    return html`<li class="block" data-testid="agent-item" data-id=${agent.id}>
      <div class="row-head">
        <span class="row-title"><h3>${agent.name}</h3><span class="muted small">${agent.id}</span></span>
        <button type="button" data-testid="agent-edit" aria-expanded=${editing ? 'true' : 'false'} @click=${() => void this.#toggle(agent)}>
          ${editing ? closeIcon : pencilIcon}${editing ? strings.close : strings.edit}<span class="visually-hidden"> ${agent.name}</span>
        </button>
      </div>
      ${agent.description ? html`<p class="small">${agent.description}</p>` : nothing}
      <dl class="facts small">
        <dt>${strings.agentsTools}</dt>
        <dd>${agent.tools === null ? strings.agentsAllTools : agent.tools.length === 0 ? strings.agentsNoTools : agent.tools.join(', ')}</dd>
        <dt>${strings.agentsModel}</dt>
        <dd>${agent.preferred_model ?? (agent.preferred_strength ? strings.agentsStrength.replace('{strength}', agent.preferred_strength) : strings.agentsModelAny)}</dd>
        <dt>${strings.agentsChanged}</dt>
        <dd>${source(agent)}</dd>
        <dt>${strings.agentsVersion}</dt>
        <dd><code>${agent.hash.slice(0, 12)}</code></dd>
      </dl>
      ${editing && this.draft ? this.#renderEditor(this.draft) : nothing}
    </li>`;
  }

  #renderEditor(draft: Draft): TemplateResult {
    return html`<form class="editor" data-testid="agent-form" @submit=${this.#save} novalidate>
      <div class="field">
        <label for="agent-meta">${strings.agentsMeta}</label>
        <textarea id="agent-meta" rows="8" spellcheck="false" aria-describedby="agent-meta-hint" .value=${draft.meta}
          @input=${(e: Event) => (this.draft = { ...draft, meta: (e.target as HTMLTextAreaElement).value })}></textarea>
        <p class="hint" id="agent-meta-hint">${strings.agentsMetaHint}</p>
      </div>
      <div class="field">
        <label for="agent-prompt">${strings.agentsPrompt}</label>
        <textarea id="agent-prompt" rows="14" aria-describedby="agent-prompt-hint" .value=${draft.prompt}
          @input=${(e: Event) => (this.draft = { ...draft, prompt: (e.target as HTMLTextAreaElement).value })}></textarea>
        <p class="hint" id="agent-prompt-hint">${strings.agentsPromptHint}</p>
      </div>
      <div class="actions">
        <button type="submit" class="primary" data-testid="agent-save" ?disabled=${this.busy}>${this.busy ? strings.saving : strings.save}</button>
        <button type="button" @click=${() => (this.draft = null)}>${strings.cancel}</button>
      </div>
    </form>`;
  }

  async #toggle(agent: Agent): Promise<void> {
    if (this.draft?.id === agent.id) {
      this.draft = null;
      return;
    }
    const client = this.login?.client;
    if (!client) return;
    this.error = '';
    try {
      const detail = await client.agent(agent.id);
      const meta: Record<string, unknown> = { name: detail.name, description: detail.description };
      if (detail.preferred_model) meta['preferred_model'] = detail.preferred_model;
      if (detail.preferred_strength) meta['preferred_strength'] = detail.preferred_strength;
      if (detail.tools !== null) meta['tools'] = detail.tools;
      this.draft = { id: agent.id, meta: JSON.stringify(meta, null, 2), prompt: detail.prompt };
    } catch (error) {
      this.error = describeError(error);
    }
  }

  async #save(event: Event): Promise<void> {
    event.preventDefault();
    const client = this.login?.client;
    const draft = this.draft;
    if (!client || !draft || this.busy) return;
    let meta: unknown;
    try {
      meta = JSON.parse(draft.meta);
    } catch {
      this.error = strings.agentsMetaInvalid;
      return;
    }
    if (!isRecord(meta)) {
      this.error = strings.agentsMetaInvalid;
      return;
    }
    this.busy = true;
    this.error = '';
    try {
      await client.saveAgent(draft.id, meta, draft.prompt);
      this.draft = null;
      this.announcement = strings.agentsSaved;
      await this.#agents.reload();
    } catch (error) {
      this.error = describeError(error);
    } finally {
      this.busy = false;
    }
  }
}

function source(agent: Agent): string {
  switch (agent.source) {
    case 'app':
      return strings.privacyAgentApp.replace('{name}', agent.changed_by?.name ?? strings.unknownPerson).replace('{time}', formatTime(agent.changed_at));
    case 'disk':
      return strings.privacyAgentDisk.replace('{time}', formatTime(agent.changed_at));
    default:
      return strings.privacyAgentBundled;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-admin-agents': SkaldAdminAgents;
  }
}
