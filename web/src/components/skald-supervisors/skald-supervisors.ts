/**
 * Who besides the person can open their space (§6.2), on the privacy page: the requests
 * waiting for their answer (what accepting means; Accept or Decline), the supervisors
 * who can open it now (End, where the person's role lets them), each time one of them
 * did, in plain words and local times, and a new key for the space — what makes a copy
 * of the key that someone held open nothing once their supervision ended.
 *
 * Owns: reading the person's edges and access log, the calls that answer or end an edge,
 * and the new key's call, whose answer (a new session and recovery code) goes up to the
 * app. Never keeps the password typed for the new key once the call returned.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';

import { ApiError } from '../../api/client.js';
import type { AccessEntry, MySupervision, SupervisionEdge } from '../../api/types.js';
import { ActionController } from '../../controllers/action-controller.js';
import { ResourceController } from '../../controllers/resource-controller.js';
import { StoreController } from '../../controllers/store-controller.js';
import { strings } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import { formatClock, formatDay, formatNumber } from '../../i18n/format.js';
import { plural } from '../../i18n/locale.js';
import { rotateKey, type Login } from '../../state/login.js';
import { activeEdges, groupVisits, visitSentence, type Visit } from '../../state/supervision.js';
import { controls, page } from '../../styles/controls.js';
import { KeyRotatedEvent } from '../events.js';
import type { SkaldConfirm } from '../skald-confirm/skald-confirm.js';
import '../skald-confirm/skald-confirm.js';
import { styles } from './skald-supervisors.styles.js';

/** Who can open the space changed (a request answered, an edge ended): the page reads it again. */
export class SupervisionChangedEvent extends Event {
  static readonly type = 'skald-supervision-changed';
  constructor() {
    super(SupervisionChangedEvent.type, { bubbles: true, composed: true });
  }
}

interface Mine {
  readonly edges: MySupervision;
  readonly log: readonly AccessEntry[];
}

/** How many visits are shown at first, and how many more each "earlier" adds. */
const VISITS_SHOWN = 20;

/**
 * Test hooks: `[data-testid=supervision-request]` (its `data-supervisor`) with
 * `supervision-accept` and `supervision-decline`; `[data-testid=supervisor-edge]` (its
 * `data-supervisor`) with `supervision-end` (only where the role lets the person end it)
 * or `supervision-end-refused`; `[data-testid=access-visit]` (its `data-area`,
 * `data-supervisor`), `access-none`, `access-more`; `[data-testid=supervision-ended]`;
 * `#rekey-password`, `[data-testid=rekey-submit]`, `[data-testid=rekey-error]`;
 * `[data-testid=supervision-error]`.
 *
 * @summary The person's supervisors: requests, who can open the space, each visit, a new key.
 * @fires skald-supervision-changed - a request was answered or an edge ended
 * @fires skald-key-rotated - the space has a new key; the event carries the new session
 */
@customElement('skald-supervisors')
export class SkaldSupervisors extends LitElement {
  static override styles = [controls, page, styles];

  @property({ attribute: false }) login: Login | null = null;

  @state() private password = '';
  @state() private rekeyError = '';
  @state() private rekeying = false;
  @state() private shown = VISITS_SHOWN;
  @state() private announcement = '';

  @query('skald-confirm') private confirm?: SkaldConfirm;

  readonly #action = new ActionController(this);
  readonly #data = new ResourceController<Mine>(this, async (signal) => {
    const client = this.login?.client;
    if (!client) throw new ApiError('network', '', 0);
    const [edges, log] = await Promise.all([client.mySupervision(signal), client.accessLog(signal)]);
    return { edges, log };
  });

  constructor() {
    super();
    // A `supervision_requested` or `supervision_ended` notice: what is shown here changed.
    new StoreController(this, () => this.login?.notices);
  }

  /** The supervision notices seen so far, by id: a new one means the edges changed. */
  #noticed = '';

  protected override willUpdate(): void {
    const noticed = (this.login?.notices.notices ?? [])
      .filter((notice) => notice.kind.startsWith('supervision_'))
      .map((notice) => notice.id)
      .join();
    if (noticed === this.#noticed) return;
    const first = this.#noticed === '' && this.#data.value === undefined;
    this.#noticed = noticed;
    if (!first) void this.#data.reload();
  }

  override render(): TemplateResult {
    const data = this.#data.value;
    const pending = data?.edges.supervised_by.filter((edge) => edge.state === 'pending') ?? [];
    const active = activeEdges(data?.edges.supervised_by ?? []);
    return html`
      ${this.#data.status()}
      ${this.#action.error ? html`<p class="notice error" role="alert" data-testid="supervision-error">${this.#action.error}</p>` : nothing}
      ${pending.length > 0 ? this.#renderRequests(pending) : nothing}
      ${data && (active.length > 0 || data.log.length > 0) ? this.#renderVisits(active, data.log) : nothing}
      ${this.#renderNewKey()}
      <p class="visually-hidden" role="status" aria-live="polite">${this.announcement}</p>
      <skald-confirm></skald-confirm>
    `;
  }

  // ---- requests ----------------------------------------------------------------

  #renderRequests(pending: readonly SupervisionEdge[]): TemplateResult {
    return html`<section class="block" aria-labelledby="requests-title">
      <h3 id="requests-title">${strings.supervisionRequestsTitle}</h3>
      <ul class="rows">
        ${pending.map(
          (edge) => html`<li data-testid="supervision-request" data-supervisor=${edge.supervisor_name}>
            <p><strong>${strings.supervisionRequest.replace('{name}', edge.supervisor_name)}</strong></p>
            <p class="small muted">${this.#askedBy(edge)}</p>
            <p>${strings.supervisionAcceptMeans.replace(/\{name\}/g, edge.supervisor_name)}</p>
            <p class="small">${strings.supervisionDeclineMeans}</p>
            <div class="actions">
              <button type="button" class="primary" data-testid="supervision-accept" ?disabled=${this.#action.busy} @click=${() => void this.#accept(edge)}>
                ${strings.supervisionAccept}<span class="visually-hidden"> ${edge.supervisor_name}</span>
              </button>
              <button type="button" data-testid="supervision-decline" ?disabled=${this.#action.busy} @click=${() => void this.#decline(edge)}>
                ${strings.supervisionDecline}<span class="visually-hidden"> ${edge.supervisor_name}</span>
              </button>
            </div>
          </li>`,
        )}
      </ul>
    </section>`;
  }

  #askedBy(edge: SupervisionEdge): string {
    const when = formatDay(edge.requested_at);
    return edge.requested_by === edge.supervisor_name
      ? strings.supervisionAskedOn.replace('{time}', when)
      : strings.supervisionAskedBy.replace('{name}', edge.requested_by).replace('{time}', when);
  }

  async #accept(edge: SupervisionEdge): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    const confirmed = await this.confirm?.ask({
      title: strings.supervisionAcceptTitle.replace('{name}', edge.supervisor_name),
      body: strings.supervisionAcceptMeans.replace(/\{name\}/g, edge.supervisor_name),
      action: strings.supervisionAccept,
    });
    if (!confirmed) return;
    await this.#run(() => client.acceptSupervision(edge.id), strings.supervisionAccepted.replace('{name}', edge.supervisor_name));
  }

  async #decline(edge: SupervisionEdge): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    await this.#run(() => client.endSupervision(edge.id), strings.supervisionDeclined.replace('{name}', edge.supervisor_name));
  }

  // ---- who can open the space, and each time they did -------------------------------

  #renderVisits(active: readonly SupervisionEdge[], log: readonly AccessEntry[]): TemplateResult {
    const mayEnd = this.login?.me.role?.may_end_supervision ?? false;
    const visits = groupVisits(log);
    const days = byDay(visits.slice(0, this.shown));
    return html`<section class="block" aria-labelledby="visits-title" data-testid="supervision-visits">
      <h3 id="visits-title">${strings.supervisionVisitsTitle}</h3>
      ${active.length > 0
        ? html`<ul class="rows edges">
            ${active.map((edge) => this.#renderEdge(edge, mayEnd))}
          </ul>`
        : nothing}
      <h4 class="sub">${strings.supervisionVisitsEach}</h4>
      ${visits.length === 0
        ? html`<p class="muted" data-testid="access-none">${strings.supervisionVisitsNone}</p>`
        : days.map(
            (day) => html`<h5 class="day">${day.label}</h5>
              <ul class="rows visits">
                ${day.visits.map(
                  (visit) => html`<li data-testid="access-visit" data-area=${visit.area} data-supervisor=${visit.supervisorName}>
                    ${visitSentence(visit, formatClock(visit.at))}
                  </li>`,
                )}
              </ul>`,
          )}
      ${visits.length > this.shown
        ? html`<button type="button" class="link" data-testid="access-more" @click=${() => (this.shown += VISITS_SHOWN)}>${strings.supervisionVisitsMore}</button>`
        : nothing}
      <p class="muted small">${strings.supervisionVisitsKept}</p>
    </section>`;
  }

  #renderEdge(edge: SupervisionEdge, mayEnd: boolean): TemplateResult {
    const since = formatDay(edge.accepted_at ?? edge.requested_at);
    return html`<li data-testid="supervisor-edge" data-supervisor=${edge.supervisor_name}>
      <div class="row-head">
        <p><strong>${strings.supervisionCanOpen.replace('{name}', edge.supervisor_name).replace('{time}', since)}</strong></p>
        ${mayEnd
          ? html`<button type="button" data-testid="supervision-end" ?disabled=${this.#action.busy} @click=${() => void this.#end(edge)}>
              ${strings.supervisionEnd}<span class="visually-hidden"> ${edge.supervisor_name}</span>
            </button>`
          : nothing}
      </div>
      <p class="small muted">${plural(edge.opens, strings.supervisionOpens).replace('{n}', formatNumber(edge.opens))}</p>
      ${mayEnd ? nothing : html`<p class="small muted" data-testid="supervision-end-refused">${strings.supervisionEndRefused}</p>`}
    </li>`;
  }

  async #end(edge: SupervisionEdge): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    const confirmed = await this.confirm?.ask({
      title: strings.supervisionEndTitle.replace('{name}', edge.supervisor_name),
      body: strings.supervisionEndBody.replace(/\{name\}/g, edge.supervisor_name),
      action: strings.supervisionEnd,
    });
    if (!confirmed) return;
    await this.#run(() => client.endSupervision(edge.id), strings.supervisionEnded.replace('{name}', edge.supervisor_name));
  }

  #run(call: () => Promise<unknown>, done: string): Promise<boolean> {
    return this.#action.run(call, {
      done: async () => {
        this.announcement = done;
        this.dispatchEvent(new SupervisionChangedEvent());
        await this.#data.reload();
      },
    });
  }

  // ---- a new key ------------------------------------------------------------------

  #renderNewKey(): TemplateResult {
    const ended = (this.login?.notices.notices ?? []).filter((notice) => notice.kind === 'supervision_ended');
    const names = [...new Set(ended.map((notice) => supervisorOf(notice.body)).filter((name) => name !== ''))];
    return html`<section class="block" aria-labelledby="rekey-title">
      <h3 id="rekey-title">${strings.rekeyTitle}</h3>
      ${names.map(
        (name) => html`<p class="notice warn" role="note" data-testid="supervision-ended">${strings.rekeyAfterEnd.replace('{name}', name)}</p>`,
      )}
      <p>${strings.rekeyLead}</p>
      <p class="small muted">${strings.rekeyCode}</p>
      <form @submit=${this.#rotate} novalidate>
        ${this.rekeyError ? html`<p class="notice error" role="alert" data-testid="rekey-error">${this.rekeyError}</p>` : nothing}
        <div class="field">
          <label for="rekey-password">${strings.rekeyPassword}</label>
          <input
            id="rekey-password"
            type="password"
            autocomplete="current-password"
            .value=${this.password}
            @input=${(e: Event) => (this.password = (e.target as HTMLInputElement).value)}
          />
        </div>
        <div class="actions">
          <button type="submit" data-testid="rekey-submit" ?disabled=${this.rekeying}>${this.rekeying ? strings.working : strings.rekeySubmit}</button>
        </div>
      </form>
    </section>`;
  }

  async #rotate(event: Event): Promise<void> {
    event.preventDefault();
    const login = this.login;
    if (!login || this.rekeying) return;
    if (this.password === '') {
      this.rekeyError = strings.rekeyNeedsPassword;
      return;
    }
    this.rekeying = true;
    this.rekeyError = '';
    const password = this.password;
    this.password = '';
    try {
      const unlocked = await rotateKey(login, password);
      // At once, with nothing awaited before: the app takes the new session from here.
      this.dispatchEvent(new KeyRotatedEvent(unlocked));
    } catch (error) {
      this.rekeyError = error instanceof ApiError && error.code === 'invalid_credentials' ? strings.currentPasswordWrong : describeError(error);
    } finally {
      this.rekeying = false;
    }
  }
}

/** The supervisor a `supervision_ended` notice names. */
function supervisorOf(body: Record<string, unknown> | null): string {
  const name = body?.['supervisor'];
  return typeof name === 'string' ? name : '';
}

/** Visits under the day they began, in the order given. */
function byDay(visits: readonly Visit[]): { readonly label: string; readonly visits: readonly Visit[] }[] {
  const days: { label: string; visits: Visit[] }[] = [];
  for (const visit of visits) {
    const label = formatDay(visit.at);
    const last = days[days.length - 1];
    if (last !== undefined && last.label === label) last.visits.push(visit);
    else days.push({ label, visits: [visit] });
  }
  return days;
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-supervisors': SkaldSupervisors;
  }
  interface HTMLElementEventMap {
    [SupervisionChangedEvent.type]: SupervisionChangedEvent;
  }
}
