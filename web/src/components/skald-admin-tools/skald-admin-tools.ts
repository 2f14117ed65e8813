/**
 * Tool servers (MCP, §12.1), for an administrator: each server with its
 * state, where its calls go, its last error and the tail of what it wrote,
 * and its tools with their pins — new, approved, changed (the approved and the
 * current definition side by side) or gone. Approve, turn off or on, restart,
 * remove; add one (from a list of well-known servers, or by hand), or import
 * the `mcpServers` configuration another MCP client uses. Nothing a server
 * offers reaches anyone before it is approved, and an approval is a change
 * everyone else sees before their next turn.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';

import { ApiError } from '../../api/client.js';
import type { McpServer, McpTool, NewMcpServer } from '../../api/types.js';
import { ResourceController } from '../../controllers/resource-controller.js';
import { strings, type TextKey } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import { formatTime } from '../../i18n/format.js';
import type { Login } from '../../state/login.js';
import { controls, page } from '../../styles/controls.js';
import type { SkaldConfirm } from '../skald-confirm/skald-confirm.js';
import '../skald-confirm/skald-confirm.js';
import { styles } from './skald-admin-tools.styles.js';

/** A well-known server, as an example to start from. */
interface Preset {
  readonly label: TextKey;
  readonly body: NewMcpServer;
}

/** Examples an administrator can start from; each is installed separately (npx, uvx). */
export const PRESETS: readonly Preset[] = [
  {
    label: 'toolsPresetMemory',
    body: { name: 'memory', transport: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'], env: { MEMORY_FILE_PATH: '{instance_dir}/memory.jsonl' } },
  },
  {
    label: 'toolsPresetFiles',
    body: { name: 'files', transport: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '{instance_dir}/files'] },
  },
  { label: 'toolsPresetTime', body: { name: 'time', transport: 'stdio', command: 'uvx', args: ['mcp-server-time'] } },
  { label: 'toolsPresetFetch', body: { name: 'fetch', transport: 'stdio', command: 'uvx', args: ['mcp-server-fetch'] } },
  { label: 'toolsPresetHttp', body: { name: 'local', transport: 'http', url: 'http://127.0.0.1:3001/mcp' } },
];

interface Draft {
  readonly name: string;
  readonly transport: 'stdio' | 'http';
  readonly command: string;
  /** One argument per line. */
  readonly args: string;
  /** `NAME=value`, one per line. */
  readonly env: string;
  readonly url: string;
  readonly token: string;
  readonly shared: boolean;
  readonly timeout: string;
}

const EMPTY: Draft = { name: '', transport: 'stdio', command: '', args: '', env: '', url: '', token: '', shared: false, timeout: '60' };

/**
 * Test hooks: `[data-testid=tool-server]` (its `data-id`) with `server-state`,
 * `server-approval`, `server-approve`, `server-toggle`, `server-restart`,
 * `server-remove`, and per tool `[data-testid=server-tool]` (its `data-name`,
 * `data-status`) with `tool-approve` and, for a changed one, `tool-was` and
 * `tool-now`; the form `[data-testid=server-form]` with `#server-preset`,
 * `#server-name`, `#server-command`, `#server-args`, `#server-env`,
 * `#server-url`, `#server-token`, `#server-shared` and `server-add`; the
 * import `[data-testid=server-import]` with `#server-import-json`.
 *
 * @summary Tool servers: state, pins, approve, add, import.
 */
@customElement('skald-admin-tools')
export class SkaldAdminTools extends LitElement {
  static override styles = [controls, page, styles];

  @property({ attribute: false }) login: Login | null = null;

  @state() private draft: Draft = EMPTY;
  @state() private importText = '';
  @state() private busy = false;
  @state() private error = '';
  @state() private announcement = '';

  readonly #servers = new ResourceController<McpServer[]>(this, (signal) => {
    const client = this.login?.client;
    if (!client) return Promise.reject(new ApiError('network', '', 0));
    return client.mcpServers(signal);
  });

  override render(): TemplateResult {
    const servers = this.#servers.value;
    return html`
      <p class="lead">${strings.toolsLead}</p>
      ${this.error ? html`<p class="notice error" role="alert" data-testid="tools-error">${this.error}</p>` : nothing}
      ${this.#servers.status()}
      ${servers && servers.length === 0 ? html`<p class="hint" data-testid="tools-empty">${strings.toolsEmpty}</p>` : nothing}
      ${servers ? html`<ul class="server-list">${servers.map((server) => this.#renderServer(server))}</ul>` : nothing}
      ${this.#renderForm()} ${this.#renderImport()}
      <p class="visually-hidden" role="status" aria-live="polite">${this.announcement}</p>
      <skald-confirm></skald-confirm>
    `;
  }

  #renderServer(server: McpServer): TemplateResult {
    const reaches = server.transport === 'http' ? server.url ?? '' : [server.command ?? '', ...server.args].join(' ');
    const pending = server.tools.some((tool) => tool.status === 'new' || tool.status === 'changed');
    return html`<li class="block" data-testid="tool-server" data-id=${server.id}>
      <div class="row-head">
        <span class="row-title">
          <h3>${server.name}</h3>
          <span class="tag" data-testid="server-state" data-state=${server.state}>${strings[STATE[server.state]]}</span>
          <span class="tag ${server.approval === 'approved' ? 'good' : 'bad'}" data-testid="server-approval" data-approval=${server.approval}>
            ${strings[APPROVAL[server.approval]]}
          </span>
          ${server.shared ? html`<span class="tag">${strings.toolsShared}</span>` : nothing}
          <span class="tag">${server.privacy === 'remote' ? strings.toolServerRemote : strings.toolServerLocal}</span>
        </span>
      </div>
      <dl class="facts small">
        <dt>${strings.toolsReaches}</dt>
        <dd><code>${reaches}</code></dd>
        ${server.env_names.length > 0 ? html`<dt>${strings.toolsEnv}</dt><dd>${server.env_names.join(', ')}</dd>` : nothing}
        ${server.roots.length > 0 ? html`<dt>${strings.toolsRoots}</dt><dd>${server.roots.join(', ')}</dd>` : nothing}
        <dt>${strings.toolsRunning}</dt>
        <dd>${String(server.running)}</dd>
        ${server.approved_by ? html`<dt>${strings.toolsApprovedBy}</dt><dd>${server.approved_by}, ${formatTime(server.approved_at)}</dd>` : nothing}
      </dl>
      ${server.transport === 'stdio'
        ? html`<p class="small muted" data-testid="server-files">${strings.toolsFiles.replace('{server}', server.name)}</p>`
        : nothing}
      ${server.last_error
        ? html`<p class="notice error small" data-testid="server-error">${server.last_error} <span class="muted">${formatTime(server.last_error_at)}</span></p>`
        : nothing}
      ${server.stderr_tail.length > 0
        ? html`<details class="stderr">
            <summary>${strings.toolsStderr}</summary>
            <pre>${server.stderr_tail.join('\n')}</pre>
          </details>`
        : nothing}
      <ul class="rows tools">
        ${server.tools.map((tool) => this.#renderTool(server, tool))}
      </ul>
      <div class="actions">
        ${pending || server.approval !== 'approved'
          ? html`<button type="button" class="primary" data-testid="server-approve" ?disabled=${this.busy} @click=${() => void this.#approve(server, null)}>
              ${strings.toolsApproveAll}<span class="visually-hidden"> ${server.name}</span>
            </button>`
          : nothing}
        <button type="button" data-testid="server-toggle" ?disabled=${this.busy} @click=${() => void this.#toggle(server)}>
          ${server.enabled ? strings.toolsDisable : strings.toolsEnable}<span class="visually-hidden"> ${server.name}</span>
        </button>
        <button type="button" data-testid="server-restart" ?disabled=${this.busy || !server.enabled} @click=${() => void this.#restart(server)}>
          ${strings.toolsRestart}<span class="visually-hidden"> ${server.name}</span>
        </button>
        <button type="button" class="danger" data-testid="server-remove" ?disabled=${this.busy} @click=${() => void this.#remove(server)}>
          ${strings.toolsRemove}<span class="visually-hidden"> ${server.name}</span>
        </button>
      </div>
    </li>`;
  }

  #renderTool(server: McpServer, tool: McpTool): TemplateResult {
    return html`<li data-testid="server-tool" data-name=${tool.name} data-status=${tool.status}>
      <span class="row-title">
        <code>${tool.offered_as ?? tool.name}</code>
        <span class="tag ${tool.status === 'approved' ? 'good' : tool.status === 'gone' ? '' : 'bad'}">${strings[TOOL_STATUS[tool.status]]}</span>
        ${tool.destructive ? html`<span class="tag bad">${strings.toolsDestructive}</span>` : nothing}
        <span class="muted small" title=${tool.pin}>${strings.toolsPin.replace('{pin}', tool.pin.slice(0, 12))}</span>
      </span>
      ${tool.description ? html`<p class="small">${tool.description}</p>` : nothing}
      ${tool.status === 'changed' && tool.approved_definition
        ? html`<div class="side-by-side">
            <div>
              <p class="heading">${strings.toolsWas}</p>
              <pre data-testid="tool-was">${JSON.stringify(tool.approved_definition, null, 2)}</pre>
            </div>
            <div>
              <p class="heading">${strings.toolsNow}</p>
              <pre data-testid="tool-now">${JSON.stringify(tool.definition, null, 2)}</pre>
            </div>
          </div>`
        : nothing}
      ${tool.status === 'new' || tool.status === 'changed'
        ? html`<button type="button" data-testid="tool-approve" ?disabled=${this.busy} @click=${() => void this.#approve(server, [tool.name])}>
            ${strings.toolsApproveTool}<span class="visually-hidden"> ${tool.name}</span>
          </button>`
        : nothing}
    </li>`;
  }

  #renderForm(): TemplateResult {
    const d = this.draft;
    const set = (change: Partial<Draft>): void => {
      this.draft = { ...this.draft, ...change };
    };
    const text = (key: keyof Draft) => (e: Event) => set({ [key]: (e.target as HTMLInputElement | HTMLTextAreaElement).value });
    return html`<section class="block" aria-labelledby="add-title">
      <h3 id="add-title">${strings.toolsAddTitle}</h3>
      <form data-testid="server-form" @submit=${this.#add} novalidate>
        <div class="field">
          <label for="server-preset">${strings.toolsPreset}</label>
          <select id="server-preset" @change=${(e: Event) => this.#usePreset((e.target as HTMLSelectElement).value)}>
            <option value="">${strings.toolsPresetNone}</option>
            ${PRESETS.map((preset, i) => html`<option value=${String(i)}>${strings[preset.label]}</option>`)}
          </select>
          <p class="hint">${strings.toolsPresetHint}</p>
        </div>
        <div class="field">
          <label for="server-name">${strings.toolsName}</label>
          <input id="server-name" autocomplete="off" .value=${d.name} @input=${text('name')} aria-describedby="server-name-hint" />
          <p class="hint" id="server-name-hint">${strings.toolsNameHint}</p>
        </div>
        <fieldset class="field">
          <legend>${strings.toolsTransport}</legend>
          <label><input type="radio" name="transport" .checked=${d.transport === 'stdio'} @change=${() => set({ transport: 'stdio' })} /> ${strings.toolsStdio}</label>
          <label><input type="radio" name="transport" .checked=${d.transport === 'http'} @change=${() => set({ transport: 'http' })} /> ${strings.toolsHttp}</label>
        </fieldset>
        ${d.transport === 'stdio'
          ? html`<div class="field">
                <label for="server-command">${strings.toolsCommand}</label>
                <input id="server-command" autocomplete="off" spellcheck="false" .value=${d.command} @input=${text('command')} />
              </div>
              <div class="field">
                <label for="server-args">${strings.toolsArgs}</label>
                <textarea id="server-args" rows="3" spellcheck="false" .value=${d.args} @input=${text('args')}></textarea>
              </div>
              <div class="field">
                <label for="server-env">${strings.toolsEnvField}</label>
                <textarea id="server-env" rows="3" spellcheck="false" .value=${d.env} @input=${text('env')} aria-describedby="server-env-hint"></textarea>
                <p class="hint" id="server-env-hint">${strings.toolsEnvHint}</p>
              </div>
              <label class="checkbox"
                ><input id="server-shared" type="checkbox" .checked=${d.shared} @change=${(e: Event) => set({ shared: (e.target as HTMLInputElement).checked })} />
                ${strings.toolsSharedField}</label
              >`
          : html`<div class="field">
                <label for="server-url">${strings.toolsUrl}</label>
                <input id="server-url" type="url" autocomplete="off" spellcheck="false" .value=${d.url} @input=${text('url')} />
              </div>
              <div class="field">
                <label for="server-token">${strings.toolsToken}</label>
                <input id="server-token" type="password" autocomplete="off" .value=${d.token} @input=${text('token')} />
              </div>`}
        <div class="field">
          <label for="server-timeout">${strings.toolsTimeout}</label>
          <input id="server-timeout" type="number" min="1" max="3600" .value=${d.timeout} @input=${text('timeout')} />
        </div>
        <div class="actions">
          <button type="submit" class="primary" data-testid="server-add" ?disabled=${this.busy}>${strings.toolsAdd}</button>
        </div>
      </form>
    </section>`;
  }

  #renderImport(): TemplateResult {
    return html`<section class="block" aria-labelledby="import-title">
      <h3 id="import-title">${strings.toolsImportTitle}</h3>
      <form data-testid="server-import" @submit=${this.#import} novalidate>
        <div class="field">
          <label for="server-import-json">${strings.toolsImportLabel}</label>
          <textarea id="server-import-json" rows="6" spellcheck="false" .value=${this.importText}
            @input=${(e: Event) => (this.importText = (e.target as HTMLTextAreaElement).value)}></textarea>
        </div>
        <div class="actions"><button type="submit" ?disabled=${this.busy || this.importText.trim() === ''}>${strings.toolsImport}</button></div>
      </form>
    </section>`;
  }

  #usePreset(value: string): void {
    const preset = PRESETS[Number(value)];
    if (value === '' || preset === undefined) return;
    const body = preset.body;
    this.draft = {
      ...EMPTY,
      name: body.name,
      transport: body.transport === 'http' ? 'http' : 'stdio',
      command: body.command ?? '',
      args: (body.args ?? []).join('\n'),
      env: Object.entries(body.env ?? {}).map(([k, v]) => `${k}=${v}`).join('\n'),
      url: body.url ?? '',
    };
  }

  async #run(work: () => Promise<void>, done: string): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    this.error = '';
    try {
      await work();
      this.announcement = done;
      await this.#servers.reload();
    } catch (error) {
      this.error = describeError(error);
      void this.#servers.reload();
    } finally {
      this.busy = false;
    }
  }

  #add(event: Event): void {
    event.preventDefault();
    const client = this.login?.client;
    if (!client) return;
    const body = toBody(this.draft);
    if (typeof body === 'string') {
      this.error = body;
      return;
    }
    void this.#run(async () => {
      await client.addMcpServer(body);
      this.draft = EMPTY;
    }, strings.toolsAdded);
  }

  #import(event: Event): void {
    event.preventDefault();
    const client = this.login?.client;
    if (!client) return;
    let config: unknown;
    try {
      config = JSON.parse(this.importText);
    } catch {
      this.error = strings.toolsImportInvalid;
      return;
    }
    const servers = typeof config === 'object' && config !== null && 'mcpServers' in config ? config.mcpServers : config;
    if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) {
      this.error = strings.toolsImportInvalid;
      return;
    }
    void this.#run(async () => {
      const results = await client.importMcp(servers as Record<string, unknown>);
      const refused = results.filter((r) => r.id === null);
      if (refused.length > 0) this.error = refused.map((r) => `${r.name}: ${r.error ?? ''}`).join('\n');
      this.importText = '';
    }, strings.toolsImported);
  }

  #approve(server: McpServer, tools: string[] | null): Promise<void> {
    const client = this.login?.client;
    if (!client) return Promise.resolve();
    return this.#run(() => client.approveMcp(server.id, tools), strings.toolsApproved);
  }

  #toggle(server: McpServer): Promise<void> {
    const client = this.login?.client;
    if (!client) return Promise.resolve();
    return this.#run(() => client.patchMcp(server.id, { enabled: !server.enabled }), strings.toolsSaved);
  }

  #restart(server: McpServer): Promise<void> {
    const client = this.login?.client;
    if (!client) return Promise.resolve();
    return this.#run(() => client.restartMcp(server.id), strings.toolsRestarted);
  }

  async #remove(server: McpServer): Promise<void> {
    const client = this.login?.client;
    const confirm = this.renderRoot.querySelector<SkaldConfirm>('skald-confirm');
    if (!client || !confirm) return;
    const sure = await confirm.ask({
      title: strings.toolsRemoveTitle.replace('{name}', server.name),
      body: strings.toolsRemoveBody,
      action: strings.toolsRemove,
    });
    if (sure) await this.#run(() => client.removeMcp(server.id), strings.toolsRemoved);
  }
}

const STATE = {
  running: 'toolsStateRunning',
  idle: 'toolsStateIdle',
  down: 'toolsStateDown',
  given_up: 'toolsStateGivenUp',
  disabled: 'toolsStateDisabled',
} as const;

const APPROVAL = {
  unapproved: 'toolsUnapproved',
  approved: 'toolsApprovedTag',
  changed: 'toolsChanged',
} as const;

const TOOL_STATUS = {
  new: 'toolsToolNew',
  approved: 'toolsApprovedTag',
  changed: 'toolsChanged',
  gone: 'toolsToolGone',
} as const;

/** The form as the API takes it, or what is wrong with it. */
export function toBody(draft: Draft): NewMcpServer | string {
  const name = draft.name.trim();
  if (name === '') return strings.toolsNameMissing;
  const timeout = Number(draft.timeout);
  const timeoutSeconds = Number.isInteger(timeout) && timeout > 0 ? timeout : undefined;
  if (draft.transport === 'http') {
    return {
      name,
      transport: 'http',
      url: draft.url.trim(),
      ...(draft.token ? { token: draft.token } : {}),
      ...(timeoutSeconds ? { timeout_seconds: timeoutSeconds } : {}),
    };
  }
  const env: Record<string, string> = {};
  for (const line of draft.env.split('\n').map((l) => l.trim()).filter((l) => l !== '')) {
    const at = line.indexOf('=');
    if (at <= 0) return strings.toolsEnvInvalid.replace('{line}', line);
    env[line.slice(0, at).trim()] = line.slice(at + 1);
  }
  const args = draft.args.split('\n').map((a) => a.trim()).filter((a) => a !== '');
  return {
    name,
    transport: 'stdio',
    command: draft.command.trim(),
    ...(args.length > 0 ? { args } : {}),
    ...(Object.keys(env).length > 0 ? { env } : {}),
    ...(draft.shared ? { shared: true } : {}),
    ...(timeoutSeconds ? { timeout_seconds: timeoutSeconds } : {}),
  };
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-admin-tools': SkaldAdminTools;
  }
}
