/**
 * Supervision (§6.2), for an administrator: every edge — who can open whose space,
 * whether it waits for the person to accept (or to enrol), how often it was used — a
 * form to ask for a new one, and Remove. Asking opens nothing: the supervised person
 * accepts in their own session, or is told at enrolment, before choosing a password.
 * Which roles may supervise or be supervised is the Roles section's; the server refuses
 * what the roles do not allow, in words shown as it gives them.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';

import { ApiError } from '../../api/client.js';
import type { Person, RoleDetail, SupervisionEdge } from '../../api/types.js';
import { ActionController } from '../../controllers/action-controller.js';
import { ResourceController } from '../../controllers/resource-controller.js';
import { strings } from '../../i18n/en.js';
import { formatDay, formatNumber, formatTime } from '../../i18n/format.js';
import { plural } from '../../i18n/locale.js';
import type { Login } from '../../state/login.js';
import { supervisedChoices, supervisorChoices } from '../../state/supervision.js';
import { controls, page } from '../../styles/controls.js';
import { plusIcon, trashIcon } from '../icons.js';
import type { SkaldConfirm } from '../skald-confirm/skald-confirm.js';
import '../skald-confirm/skald-confirm.js';
import { styles } from './skald-admin-supervision.styles.js';

interface SupervisionPage {
  readonly edges: readonly SupervisionEdge[];
  readonly people: readonly Person[];
  readonly roles: readonly RoleDetail[];
}

/**
 * Test hooks: `[data-testid=edge-row]` (its `data-supervisor`, `data-supervised`,
 * `data-state`) with `edge-remove`; `edges-none`; `#edge-supervisor`, `#edge-supervised`,
 * `[data-testid=edge-add]`, `[data-testid=edge-error]`.
 *
 * @summary Supervision: every edge, ask for one, remove one.
 */
@customElement('skald-admin-supervision')
export class SkaldAdminSupervision extends LitElement {
  static override styles = [controls, page, styles];

  @property({ attribute: false }) login: Login | null = null;

  @state() private supervisor = '';
  @state() private supervised = '';
  @state() private announcement = '';

  @query('skald-confirm') private confirm?: SkaldConfirm;

  readonly #action = new ActionController(this);
  readonly #data = new ResourceController<SupervisionPage>(this, async (signal) => {
    const client = this.login?.client;
    if (!client) throw new ApiError('network', '', 0);
    const [edges, people, roles] = await Promise.all([client.supervision(signal), client.everyone(signal), client.roles(signal)]);
    return { edges, people, roles };
  });

  override render(): TemplateResult {
    const data = this.#data.value;
    return html`
      <p class="lead">${strings.supervisionAdminLead}</p>
      ${this.#action.error ? html`<p class="notice error" role="alert" data-testid="edge-error">${this.#action.error}</p>` : nothing}
      ${this.#data.status()}
      ${data ? this.#renderEdges(data.edges) : nothing}
      ${data ? this.#renderAsk(data) : nothing}
      <p class="visually-hidden" role="status" aria-live="polite">${this.announcement}</p>
      <skald-confirm></skald-confirm>
    `;
  }

  #renderEdges(edges: readonly SupervisionEdge[]): TemplateResult {
    return html`<section class="block" aria-labelledby="edges-title">
      <h3 id="edges-title" tabindex="-1">${strings.supervisionAdminListTitle}</h3>
      ${edges.length === 0
        ? html`<p class="muted" data-testid="edges-none">${strings.supervisionAdminNone}</p>`
        : html`<ul class="rows">
            ${edges.map((edge) => this.#renderEdge(edge))}
          </ul>`}
    </section>`;
  }

  #renderEdge(edge: SupervisionEdge): TemplateResult {
    const pair = strings.supervisionAdminPair.replace('{supervisor}', edge.supervisor_name).replace('{supervised}', edge.supervised_name);
    return html`<li data-testid="edge-row" data-supervisor=${edge.supervisor_name} data-supervised=${edge.supervised_name} data-state=${edge.state}>
      <div class="row-head">
        <span class="row-title"><strong>${pair}</strong>${this.#stateTag(edge)}</span>
        <button type="button" class="quiet danger-text" data-testid="edge-remove" ?disabled=${this.#action.busy} @click=${() => void this.#remove(edge)}>
          ${trashIcon}${strings.supervisionAdminRemove}<span class="visually-hidden"> ${pair}</span>
        </button>
      </div>
      <p class="small muted">${this.#facts(edge)}</p>
    </li>`;
  }

  #stateTag(edge: SupervisionEdge): TemplateResult {
    if (edge.state === 'active') return html`<span class="tag active">${strings.supervisionAdminActive}</span>`;
    const waiting = edge.at_enrolment ? strings.supervisionAdminWaitingEnrol : strings.supervisionAdminWaitingAccept;
    return html`<span class="tag plain">${waiting.replace('{name}', edge.supervised_name)}</span>`;
  }

  /** Since when, asked by whom, how often it was used. */
  #facts(edge: SupervisionEdge): string {
    const parts = [strings.supervisionAdminAsked.replace('{name}', edge.requested_by).replace('{time}', formatDay(edge.requested_at))];
    if (edge.accepted_at !== null) parts.push(strings.supervisionAdminSince.replace('{time}', formatDay(edge.accepted_at)));
    if (edge.state === 'active') {
      parts.push(plural(edge.opens, strings.supervisionAdminOpens).replace('{n}', formatNumber(edge.opens)));
      parts.push(plural(edge.reads, strings.supervisionAdminReads).replace('{n}', formatNumber(edge.reads)));
      if (edge.last_opened_at !== null) parts.push(strings.supervisionAdminLast.replace('{time}', formatTime(edge.last_opened_at)));
    }
    return parts.join(' · ');
  }

  #renderAsk(data: SupervisionPage): TemplateResult {
    const supervisors = supervisorChoices(data.people, data.roles);
    const supervisor = supervisors.some((p) => p.id === this.supervisor) ? this.supervisor : (supervisors[0]?.id ?? '');
    const candidates = supervisedChoices(data.people, data.roles, supervisor, data.edges);
    const supervised = candidates.some((p) => p.id === this.supervised) ? this.supervised : (candidates[0]?.id ?? '');
    return html`<section class="block" aria-labelledby="ask-title">
      <h3 id="ask-title">${strings.supervisionAdminAskTitle}</h3>
      <p>${strings.supervisionAdminAskLead}</p>
      <form class="ask" @submit=${(e: Event) => void this.#ask(e, supervisor, supervised)} novalidate>
        <div class="field">
          <label for="edge-supervisor">${strings.supervisionAdminSupervisor}</label>
          <select id="edge-supervisor" .value=${supervisor} ?disabled=${supervisors.length === 0}
            @change=${(e: Event) => (this.supervisor = (e.target as HTMLSelectElement).value)}>
            ${supervisors.length === 0 ? html`<option value="">${strings.supervisionAdminNoOne}</option>` : nothing}
            ${supervisors.map((p) => html`<option value=${p.id} ?selected=${p.id === supervisor}>${p.name}</option>`)}
          </select>
        </div>
        <div class="field">
          <label for="edge-supervised">${strings.supervisionAdminSupervised}</label>
          <select id="edge-supervised" .value=${supervised} ?disabled=${candidates.length === 0}
            @change=${(e: Event) => (this.supervised = (e.target as HTMLSelectElement).value)}>
            ${candidates.length === 0 ? html`<option value="">${strings.supervisionAdminNoOne}</option>` : nothing}
            ${candidates.map((p) => html`<option value=${p.id} ?selected=${p.id === supervised}>${p.name}</option>`)}
          </select>
        </div>
        <div class="field submit">
          <button type="submit" class="primary" data-testid="edge-add" ?disabled=${this.#action.busy || supervisor === '' || supervised === ''}>
            ${plusIcon}${strings.supervisionAdminAsk}
          </button>
        </div>
      </form>
      ${supervisors.length === 0 || candidates.length === 0 ? html`<p class="small muted" data-testid="edge-nobody">${strings.supervisionAdminNobody}</p>` : nothing}
    </section>`;
  }

  #run(call: () => Promise<unknown>, done: string): Promise<boolean> {
    return this.#action.run(call, {
      done: async () => {
        this.announcement = done;
        await this.#data.reload();
      },
    });
  }

  async #ask(event: Event, supervisor: string, supervised: string): Promise<void> {
    event.preventDefault();
    const client = this.login?.client;
    const people = this.#data.value?.people ?? [];
    if (!client || supervisor === '' || supervised === '') return;
    const name = (id: string): string => people.find((p) => p.id === id)?.name ?? '';
    const done = strings.supervisionAdminRequested.replace('{supervisor}', name(supervisor)).replace('{supervised}', name(supervised));
    if (await this.#run(() => client.requestSupervision(supervisor, supervised), done)) this.supervised = '';
  }

  async #remove(edge: SupervisionEdge): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    const fill = (text: string): string => text.replace(/\{supervisor\}/g, edge.supervisor_name).replace(/\{supervised\}/g, edge.supervised_name);
    const confirmed = await this.confirm?.ask({
      title: fill(strings.supervisionAdminRemoveTitle),
      body: fill(edge.state === 'active' ? strings.supervisionAdminRemoveActive : strings.supervisionAdminRemovePending),
      action: strings.supervisionAdminRemove,
    });
    if (!confirmed) return;
    if (await this.#run(() => client.endSupervision(edge.id), fill(strings.supervisionAdminRemoved))) {
      // The row that had focus is gone: focus goes to the list's heading.
      await this.updateComplete;
      this.renderRoot.querySelector<HTMLElement>('#edges-title')?.focus();
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-admin-supervision': SkaldAdminSupervision;
  }
}
