/**
 * Who can see my words (§3): what opens the person's space (their
 * password, their recovery code, supervisors by name — and nobody else),
 * the model providers their turns may go to and who configured them, the
 * agents whose prompts shape the answers and who wrote them (each prompt
 * readable here), and what the administrator can see about them; with the
 * supervisors, the requests to accept and each time one opened the space
 * (`skald-supervisors`). Then their password, and Lock now.
 *
 * Never claims more than the server reported: every line comes from
 * `GET /api/me/privacy`, and `skald verify` is named so anyone can check.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';

import { ApiError } from '../../api/client.js';
import type { AuditEntry, PrivacyAgent, PrivacyProvider, PrivacyReport, PrivacyToolServer } from '../../api/types.js';
import { ResourceController } from '../../controllers/resource-controller.js';
import { auditLabel, strings } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import { formatNumber, formatTime } from '../../i18n/format.js';
import type { Login } from '../../state/login.js';
import { controls, page, pageHost } from '../../styles/controls.js';
import { lockIcon } from '../icons.js';
import { LockEvent } from '../events.js';
import '../skald-change-password/skald-change-password.js';
import '../skald-supervisors/skald-supervisors.js';
import { styles } from './skald-privacy.styles.js';

/**
 * Test hooks: `[data-testid=privacy-key]`, `[data-testid=privacy-provider]`
 * (its `data-name`), `[data-testid=provider-configured-by]`,
 * `[data-testid=privacy-agent]` (its `data-id`) and its `agent-prompt-toggle`
 * and `agent-prompt`, `[data-testid=privacy-admin-sees]`,
 * `[data-testid=lock-now]`.
 *
 * @summary The privacy page: who can see the person's words.
 * @fires skald-lock - Lock now
 */
@customElement('skald-privacy')
export class SkaldPrivacy extends LitElement {
  static override styles = [controls, pageHost, page, styles];

  @property({ attribute: false }) login: Login | null = null;

  /** Agent prompts read so far, by agent id; `null` while one is being read. */
  @state() private prompts: ReadonlyMap<string, string | null> = new Map();
  @state() private open: ReadonlySet<string> = new Set();
  @state() private promptError = '';
  /** My own token for an HTTP tool server, as I type it (sent, never shown back). */
  @state() private tokenDrafts: ReadonlyMap<string, string> = new Map();
  @state() private tokenError = '';
  @state() private tokenSaved = '';

  readonly #report = new ResourceController<PrivacyReport>(this, (signal) => {
    const client = this.login?.client;
    if (!client) return Promise.reject(new ApiError('network', '', 0));
    return client.privacy(signal);
  });

  override render(): TemplateResult {
    const report = this.#report.value;
    return html`
      <header class="bar"><h2 id="privacy-title">${strings.privacyTitle}</h2></header>
      <div class="scroll">
        <div class="column">
          <p class="lead">${strings.privacyLead}</p>
          ${this.#report.status()}
          ${report ? this.#renderReport(report) : nothing}
          <section class="block" aria-label=${strings.passwordChangeTitle}>
            <skald-change-password .client=${this.login?.client ?? null} .name=${this.login?.me.user.name ?? ''}></skald-change-password>
          </section>
          <section class="block" aria-labelledby="lock-title">
            <h3 id="lock-title">${strings.lockNowTitle}</h3>
            <p>${strings.lockNowLead}</p>
            <button type="button" data-testid="lock-now" @click=${() => this.dispatchEvent(new LockEvent())}>${lockIcon}${strings.lockNow}</button>
          </section>
        </div>
      </div>
    `;
  }

  #renderReport(report: PrivacyReport): TemplateResult {
    return html`
      <section class="block" aria-labelledby="keys-title">
        <h3 id="keys-title">${strings.privacyKeysTitle}</h3>
        <p>${strings.privacyKeysLead}</p>
        <ul class="rows keys">
          ${report.keys.map(
            (key) => html`<li data-testid="privacy-key" data-kind=${key.kind}>
              <span class="key-dot" aria-hidden="true"></span>${keyLabel(key.kind, key.what)}
            </li>`,
          )}
          ${report.supervisors.map(
            (supervisor) => html`<li data-testid="privacy-key" data-kind="supervisor">
              <span class="key-dot" aria-hidden="true"></span>${strings.privacySupervisor.replace('{name}', supervisor.name)}
            </li>`,
          )}
        </ul>
        ${report.supervisors.length === 0 ? html`<p class="muted small" data-testid="no-supervisors">${strings.privacyNoSupervisors}</p>` : nothing}
        <p class="notice ok"><strong>${report.supervisors.length === 0 ? strings.privacyNobodyElse : strings.privacyNobodyElseSupervised}</strong></p>
        <p class="muted small">${strings.privacyVerify} <code>skald verify</code></p>
      </section>

      <skald-supervisors .login=${this.login} @skald-supervision-changed=${() => void this.#report.reload()}></skald-supervisors>

      <section class="block" aria-labelledby="providers-title">
        <h3 id="providers-title">${strings.privacyProvidersTitle}</h3>
        <p>${strings.privacyProvidersLead}</p>
        ${report.providers.length === 0
          ? html`<p class="muted">${strings.privacyNoProviders}</p>`
          : html`<ul class="rows">
              ${report.providers.map((provider) => this.#renderProvider(provider))}
            </ul>`}
      </section>

      <section class="block" aria-labelledby="tool-servers-title">
        <h3 id="tool-servers-title">${strings.privacyToolServersTitle}</h3>
        <p>${strings.privacyToolServersLead}</p>
        ${report.tool_servers.length === 0
          ? html`<p class="muted">${strings.privacyToolServersNone}</p>`
          : html`<ul class="rows">
              ${report.tool_servers.map((server) => this.#renderToolServer(server))}
            </ul>`}
      </section>

      <section class="block" aria-labelledby="agents-title">
        <h3 id="agents-title">${strings.privacyAgentsTitle}</h3>
        <p>${strings.privacyAgentsLead}</p>
        ${this.promptError ? html`<p class="notice error" role="alert">${this.promptError}</p>` : nothing}
        <ul class="rows">
          ${report.agents.map((agent) => this.#renderAgent(agent))}
        </ul>
      </section>

      <section class="block" aria-labelledby="admin-sees-title" data-testid="privacy-admin-sees">
        <h3 id="admin-sees-title">${strings.privacyAdminTitle}</h3>
        <p>${strings.privacyAdminLead}</p>
        <dl class="facts">
          <dt>${strings.privacyAdminName}</dt>
          <dd>${report.administrators_see.name}</dd>
          <dt>${strings.privacyAdminRole}</dt>
          <dd>${report.administrators_see.role}</dd>
          <dt>${strings.privacyAdminUsage}</dt>
          <dd>${this.#usage(report)}</dd>
          <dt>${strings.privacyReadableJobs}</dt>
          <dd data-testid="privacy-readable-jobs">
            ${report.administrators_see.readable_jobs.length === 0
              ? strings.privacyReadableJobsNone
              : html`<ul class="plain">
                  ${report.administrators_see.readable_jobs.map(
                    (job) => html`<li data-testid="privacy-readable-job">
                      <a href="#/reminders">${job.text}</a>${job.shared ? html` · ${strings.privacyReadableShared}` : nothing}
                    </li>`,
                  )}
                </ul>`}
          </dd>
        </dl>
        <h4 class="sub">${strings.privacyAuditTitle}</h4>
        ${report.administrators_see.audit.length === 0
          ? html`<p class="muted">${strings.privacyAuditNone}</p>`
          : html`<ul class="rows">
              ${report.administrators_see.audit.map((entry) => this.#renderAudit(entry))}
            </ul>`}
        <p class="muted small">${strings.privacyAdminNever}</p>
      </section>
    `;
  }

  #renderProvider(provider: PrivacyProvider): TemplateResult {
    const local = provider.privacy === 'local';
    return html`<li data-testid="privacy-provider" data-name=${provider.name}>
      <div class="row-head">
        <span class="row-title"><h4>${provider.name}</h4>
          <span class="tag ${local ? 'local' : 'remote'}">${local ? strings.privacyLocal : strings.privacyRemote}</span>
        </span>
      </div>
      <p class="small">${local ? strings.privacyLocalLong : strings.privacyRemoteLong.replace('{name}', provider.name)}</p>
      <p class="small" data-testid="provider-configured-by">
        ${strings.privacyConfiguredBy.replace('{name}', provider.configured_by || strings.unknownPerson)}
        ${provider.changed_by && provider.changed_by !== provider.configured_by
          ? html` · ${strings.privacyChangedBy.replace('{name}', provider.changed_by)}`
          : nothing}
      </p>
      <p class="small muted">${strings.privacyModels.replace('{models}', provider.models.join(', '))}</p>
    </li>`;
  }

  #renderToolServer(server: PrivacyToolServer): TemplateResult {
    const local = server.privacy === 'local';
    return html`<li data-testid="privacy-tool-server" data-name=${server.name}>
      <div class="row-head">
        <span class="row-title"><h4>${server.name}</h4>
          <span class="tag ${local ? 'local' : 'remote'}">${local ? strings.privacyLocal : strings.privacyRemote}</span>
          ${server.shared ? html`<span class="tag" data-testid="tool-server-shared">${strings.toolsShared}</span>` : nothing}
        </span>
      </div>
      <p class="small"><code>${server.reaches}</code></p>
      ${server.shared ? html`<p class="small">${strings.toolServerShared}</p>` : nothing}
      ${server.http ? nothing : html`<p class="small" data-testid="tool-server-files">${strings.privacyToolServerFiles}</p>`}
      <p class="small muted">${server.tools.join(', ')}</p>
      ${server.http ? this.#renderOwnToken(server) : nothing}
    </li>`;
  }

  /** My own token for an HTTP tool server: set, changed or removed; never shown. */
  #renderOwnToken(server: PrivacyToolServer): TemplateResult {
    const id = `own-token-${server.id}`;
    const draft = this.tokenDrafts.get(server.id) ?? '';
    return html`<form class="own-token" data-testid="own-token" @submit=${(e: Event) => void this.#saveToken(e, server)}>
      <p class="small" data-testid="own-token-state">${server.own_token ? strings.privacyOwnTokenSet : strings.privacyOwnTokenNone}</p>
      <label for=${id}>${strings.privacyOwnToken}</label>
      <input id=${id} type="password" autocomplete="off" .value=${draft}
        @input=${(e: Event) => (this.tokenDrafts = new Map([...this.tokenDrafts, [server.id, (e.target as HTMLInputElement).value]]))} />
      <div class="actions">
        <button type="submit" ?disabled=${draft.trim() === ''}>${strings.privacyOwnTokenSave}</button>
        ${server.own_token
          ? html`<button type="button" data-testid="own-token-remove" @click=${() => void this.#removeToken(server)}>${strings.privacyOwnTokenRemove}</button>`
          : nothing}
      </div>
      ${this.tokenError ? html`<p class="notice error" role="alert">${this.tokenError}</p>` : nothing}
      ${this.tokenSaved === server.id ? html`<p class="small" role="status">${strings.privacyOwnTokenSaved}</p>` : nothing}
    </form>`;
  }

  async #saveToken(event: Event, server: PrivacyToolServer): Promise<void> {
    event.preventDefault();
    const client = this.login?.client;
    const token = (this.tokenDrafts.get(server.id) ?? '').trim();
    if (!client || token === '') return;
    this.tokenError = '';
    try {
      await client.putOwnToken(server.id, token);
      this.tokenDrafts = new Map([...this.tokenDrafts].filter(([k]) => k !== server.id));
      this.tokenSaved = server.id;
      await this.#report.reload();
    } catch (error) {
      this.tokenError = describeError(error);
    }
  }

  async #removeToken(server: PrivacyToolServer): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    this.tokenError = '';
    try {
      await client.deleteOwnToken(server.id);
      this.tokenSaved = '';
      await this.#report.reload();
    } catch (error) {
      this.tokenError = describeError(error);
    }
  }

  #renderAgent(agent: PrivacyAgent): TemplateResult {
    const open = this.open.has(agent.id);
    const prompt = this.prompts.get(agent.id);
    return html`<li data-testid="privacy-agent" data-id=${agent.id}>
      <div class="row-head">
        <span class="row-title"><h4>${agent.name}</h4><span class="muted small">${agent.id}</span></span>
        <button
          type="button"
          data-testid="agent-prompt-toggle"
          aria-expanded=${open ? 'true' : 'false'}
          aria-controls="prompt-${agent.id}"
          @click=${() => void this.#togglePrompt(agent.id)}
        >
          ${open ? strings.privacyHidePrompt : strings.privacyShowPrompt}
        </button>
      </div>
      <p class="small">${agentSource(agent)}</p>
      <p class="small muted">${strings.privacyVersion.replace('{hash}', agent.hash.slice(0, 12))}</p>
      <div id="prompt-${agent.id}" ?hidden=${!open}>
        ${open
          ? prompt === undefined || prompt === null
            ? html`<p class="hint" role="status">${strings.loading}</p>`
            : html`<pre class="text" data-testid="agent-prompt" tabindex="0" aria-label=${strings.privacyPromptLabel.replace('{name}', agent.name)}>${prompt}</pre>`
          : nothing}
      </div>
    </li>`;
  }

  async #togglePrompt(id: string): Promise<void> {
    const open = new Set(this.open);
    if (open.has(id)) {
      open.delete(id);
      this.open = open;
      return;
    }
    open.add(id);
    this.open = open;
    if (this.prompts.get(id)) return;
    this.promptError = '';
    this.prompts = new Map(this.prompts).set(id, null);
    try {
      const agent = await this.login!.client.agent(id);
      this.prompts = new Map(this.prompts).set(id, agent.prompt);
    } catch (error) {
      const prompts = new Map(this.prompts);
      prompts.delete(id);
      this.prompts = prompts;
      const closed = new Set(this.open);
      closed.delete(id);
      this.open = closed;
      this.promptError = describeError(error);
    }
  }

  #usage(report: PrivacyReport): string {
    const usage = report.administrators_see.usage;
    if (usage === null) return strings.privacyUsageNone;
    return strings.privacyUsage
      .replace('{today}', formatNumber(usage.today_requests))
      .replace('{month}', formatNumber(usage.month_requests))
      .replace('{total}', formatNumber(usage.total_requests))
      .replace('{tokens}', formatNumber(usage.total_tokens));
  }

  #renderAudit(entry: AuditEntry): TemplateResult {
    return html`<li class="small">
      <strong>${auditLabel(entry)}</strong>
      <span class="muted">· ${strings.auditBy.replace('{name}', entry.actor_name)} · ${formatTime(entry.at)}</span>
    </li>`;
  }
}

function keyLabel(kind: string, what: string): string {
  switch (kind) {
    case 'password':
      return strings.privacyKeyPassword;
    case 'recovery':
      return strings.privacyKeyRecovery;
    default:
      return what;
  }
}

function agentSource(agent: PrivacyAgent): string {
  switch (agent.source) {
    case 'app':
      return strings.privacyAgentApp.replace('{name}', agent.changed_by ?? strings.unknownPerson).replace('{time}', formatTime(agent.changed_at));
    case 'disk':
      return strings.privacyAgentDisk.replace('{time}', formatTime(agent.changed_at));
    default:
      return strings.privacyAgentBundled;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-privacy': SkaldPrivacy;
  }
}
