/**
 * The person's reminders (§11): made once (a date and time) or again and again (a
 * 5-field pattern, with a preview of the next three times as it is typed), listed with
 * the next time in the person's own time, paused, edited, deleted, and each one's
 * history of runs. A reminder's words stay in the person's encrypted space unless they
 * choose to keep them readable while they are away, which the page labels as such: the
 * administrator can read those too (§3).
 *
 * A reminder may also be for everyone (seen by all, its words readable by all, changed
 * only by its maker or an administrator) or for another member (theirs once made: the
 * page says so before it is saved, and it leaves this person's list). Each one can be
 * snoozed: 10 minutes, an hour, or the same time tomorrow.
 *
 * Owns: the calls to `/api/jobs`. Never: keeps a reminder's words after the page leaves.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';

import { ApiError, type ApiClient } from '../../api/client.js';
import type { Agent, Job, JobKind, JobRun, MissedPolicy, Snooze } from '../../api/types.js';
import { ResourceController } from '../../controllers/resource-controller.js';
import { strings } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import { formatTime } from '../../i18n/format.js';
import type { Login } from '../../state/login.js';
import { controls, page, pageHost } from '../../styles/controls.js';
import type { SkaldConfirm } from '../skald-confirm/skald-confirm.js';
import '../skald-confirm/skald-confirm.js';
import { styles } from './skald-reminders.styles.js';

/** How long the preview waits after the last key before it asks. */
const PREVIEW_DELAY_MS = 300;

/** What the form holds. */
interface Draft {
  /** A reminder (shown), or a task (a prompt the assistant runs on its own). */
  readonly kind: JobKind;
  readonly text: string;
  readonly repeat: boolean;
  /** A `datetime-local` value: a date and time in `zone`. */
  readonly at: string;
  readonly cron: string;
  readonly missed: MissedPolicy;
  readonly readable: boolean;
  /** Whom a reminder is for: the person (`''`), everyone (`EVERYONE`), or a member's name. */
  readonly audience: string;
  /** The agent that runs a task. */
  readonly agent: string;
}

/** The audience that means everyone. */
const EVERYONE = '*';

const EMPTY: Draft = { kind: 'reminder', text: '', repeat: false, at: '', cron: '0 8 * * 1-5', missed: 'skip', readable: false, audience: '', agent: 'main' };

/**
 * Test hooks: `[data-testid=reminder-text]`, `reminder-once`, `reminder-repeat`,
 * `reminder-at`, `reminder-cron`, `reminder-preview` (each time an `<li>`),
 * `reminder-readable`, `reminder-save`, `reminder-error`, per reminder
 * `[data-testid=reminder]` (its `data-id`) with `reminder-next`, `reminder-pause`,
 * `reminder-edit`, `reminder-delete`, `reminder-history`, `reminder-runs`,
 * `reminder-snooze` (a `<select>`), `reminder-shared`, `reminder-set-by`; the form's
 * `reminder-for` (a `<select>`: `''`, `*` or a member's name).
 *
 * @summary The Reminders page: make, list, pause, edit, delete, history.
 */
@customElement('skald-reminders')
export class SkaldReminders extends LitElement {
  static override styles = [controls, pageHost, page, styles];

  @property({ attribute: false }) login: Login | null = null;

  @state() private draft: Draft = EMPTY;
  /** The reminder being edited; none for a new one. */
  @state() private editing: Job | null = null;
  @state() private preview: readonly string[] = [];
  @state() private previewError = '';
  @state() private busy = false;
  @state() private error = '';
  @state() private announcement = '';
  /** The history shown, by reminder. */
  @state() private runs: ReadonlyMap<string, readonly JobRun[]> = new Map();

  @query('skald-confirm') private confirm?: SkaldConfirm;

  readonly #list = new ResourceController<readonly Job[]>(this, (signal) => this.#client().jobs(signal));
  /** The agents a task can be run by; main alone until they are read. */
  @state() private agents: readonly Agent[] = [];
  #previewTimer: ReturnType<typeof setTimeout> | undefined;
  #previewAsked = 0;

  #client(): ApiClient {
    const client = this.login?.client;
    if (!client) throw new ApiError('network', 'not logged in', 0);
    return client;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.#schedulePreview();
    void this.#readAgents();
  }

  async #readAgents(): Promise<void> {
    try {
      this.agents = (await this.#client().agents()).agents;
    } catch {
      // Without the list a task is run by main, which every Skald has.
      this.agents = [];
    }
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearTimeout(this.#previewTimer);
  }

  /** The time zone the page reads and shows times in: this computer's. */
  #zone(): string {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  }

  #set(change: Partial<Draft>): void {
    this.draft = { ...this.draft, ...change };
    if ('repeat' in change || 'at' in change || 'cron' in change) this.#schedulePreview();
  }

  /** Asks, once typing pauses, when the schedule would come; shows why it cannot be instead. */
  #schedulePreview(): void {
    clearTimeout(this.#previewTimer);
    this.#previewTimer = setTimeout(() => void this.#readPreview(), PREVIEW_DELAY_MS);
  }

  async #readPreview(): Promise<void> {
    const draft = this.draft;
    const asked = ++this.#previewAsked;
    if (!this.login || (draft.repeat ? draft.cron.trim() === '' : draft.at === '')) {
      this.preview = [];
      this.previewError = '';
      return;
    }
    try {
      const schedule = draft.repeat ? { cron: draft.cron.trim(), zone: this.#zone() } : { at: draft.at, zone: this.#zone() };
      const preview = await this.#client().previewJob(schedule);
      if (asked !== this.#previewAsked) return;
      this.preview = preview.upcoming;
      this.previewError = '';
    } catch (error) {
      if (asked !== this.#previewAsked) return;
      this.preview = [];
      this.previewError = describeError(error);
    }
  }

  async #save(event: Event): Promise<void> {
    event.preventDefault();
    if (this.busy) return;
    const draft = this.draft;
    const schedule = draft.repeat ? { cron: draft.cron.trim() } : { at: draft.at };
    this.busy = true;
    this.error = '';
    try {
      const editing = this.editing;
      if (editing === null) {
        const reminder = draft.kind === 'reminder';
        const audience = reminder ? draft.audience : '';
        await this.#client().createJob({
          kind: draft.kind,
          text: draft.text,
          ...schedule,
          zone: this.#zone(),
          missed: draft.missed,
          readable_while_away: audience === '' && draft.readable,
          ...(reminder ? {} : { agent: draft.agent }),
          ...(audience === EVERYONE ? { shared: true } : audience !== '' ? { for: audience } : {}),
        });
        this.announcement = audience !== '' && audience !== EVERYONE ? strings.reminderSentTo.replace('{name}', audience) : strings.reminderSaved;
      } else {
        await this.#client().updateJob(editing.id, {
          text: draft.text,
          ...schedule,
          zone: this.#zone(),
          missed: draft.missed,
          readable_while_away: draft.readable,
        });
        this.announcement = strings.reminderUpdated;
      }
      this.editing = null;
      this.draft = { ...EMPTY };
      this.preview = [];
      await this.#list.reload();
    } catch (error) {
      this.error = describeError(error);
    } finally {
      this.busy = false;
    }
  }

  #edit(job: Job): void {
    this.editing = job;
    this.draft = {
      kind: job.kind,
      text: job.text ?? '',
      repeat: job.cron !== null,
      at: job.at === null ? '' : localInput(job.upcoming[0] ?? job.at),
      cron: job.cron ?? EMPTY.cron,
      missed: job.missed,
      readable: job.readable_while_away,
      audience: job.shared ? EVERYONE : '',
      agent: job.agent ?? 'main',
    };
    this.#schedulePreview();
    void this.updateComplete.then(() => this.renderRoot.querySelector<HTMLElement>('#reminder-text')?.focus());
  }

  async #pause(job: Job): Promise<void> {
    await this.#act(async (client) => {
      await client.updateJob(job.id, { paused: !job.paused });
      this.announcement = job.paused ? strings.reminderResumed : strings.reminderPaused;
    });
  }

  async #snooze(job: Job, length: Snooze): Promise<void> {
    await this.#act(async (client) => {
      const snoozed = await client.snoozeJob(job.id, length);
      this.announcement = strings.reminderSnoozed.replace('{time}', formatTime(snoozed.upcoming[0] ?? snoozed.next_run));
    });
  }

  async #delete(job: Job): Promise<void> {
    const confirmed = await this.confirm?.ask({
      title: strings.reminderDeleteTitle,
      body: strings.reminderDeleteBody.replace('{text}', job.text ?? ''),
      action: strings.delete,
    });
    if (!confirmed) return;
    await this.#act(async (client) => {
      await client.deleteJob(job.id);
      if (this.editing?.id === job.id) {
        this.editing = null;
        this.draft = { ...EMPTY };
      }
      this.announcement = strings.reminderDeleted;
    });
  }

  async #toggleHistory(job: Job): Promise<void> {
    if (this.runs.has(job.id)) {
      const next = new Map(this.runs);
      next.delete(job.id);
      this.runs = next;
      return;
    }
    try {
      const runs = await this.#client().jobRuns(job.id);
      this.runs = new Map([...this.runs, [job.id, runs]]);
    } catch (error) {
      this.error = describeError(error);
    }
  }

  async #act(action: (client: ApiClient) => Promise<void>): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    this.error = '';
    try {
      await action(this.#client());
      await this.#list.reload();
    } catch (error) {
      this.error = describeError(error);
    } finally {
      this.busy = false;
    }
  }

  override render(): TemplateResult {
    return html`
      <header class="bar">
        <h2 id="reminders-title" tabindex="-1">${strings.remindersTitle}</h2>
      </header>
      <div class="scroll">
        <div class="column">
          <p class="lead">${strings.remindersLead}</p>
          ${this.#renderForm()}
          ${this.error ? html`<p class="notice error" role="alert" data-testid="reminder-error">${this.error}</p>` : nothing}
          <section class="block" aria-labelledby="reminders-list-title">
            <h3 id="reminders-list-title">${strings.remindersListTitle}</h3>
            ${this.#list.status()} ${this.#renderList()}
          </section>
        </div>
      </div>
      <p class="visually-hidden" role="status" aria-live="polite">${this.announcement}</p>
      <skald-confirm></skald-confirm>
    `;
  }

  #renderForm(): TemplateResult {
    const draft = this.draft;
    return html`<form class="block reminder-form" aria-labelledby="reminder-form-title" @submit=${(e: Event) => void this.#save(e)}>
      <h3 id="reminder-form-title">${this.editing ? strings.reminderEditTitle : strings.reminderNewTitle}</h3>
      ${this.editing
        ? nothing
        : html`<fieldset class="when">
            <legend>${strings.reminderKind}</legend>
            <label class="checkbox">
              <input type="radio" name="kind" data-testid="kind-reminder" .checked=${draft.kind === 'reminder'} @change=${() => this.#set({ kind: 'reminder' })} />
              ${strings.reminderKindReminder}
            </label>
            <label class="checkbox">
              <input type="radio" name="kind" data-testid="kind-task" .checked=${draft.kind === 'task'} @change=${() => this.#set({ kind: 'task' })} />
              ${strings.reminderKindTask}
            </label>
          </fieldset>`}
      <label for="reminder-text">${draft.kind === 'task' ? strings.reminderTaskLabel : strings.reminderTextLabel}</label>
      <input
        id="reminder-text"
        type="text"
        data-testid="reminder-text"
        maxlength="4000"
        required
        autocomplete="off"
        .value=${draft.text}
        @input=${(e: Event) => this.#set({ text: (e.target as HTMLInputElement).value })}
      />
      <fieldset class="when">
        <legend>${strings.reminderWhen}</legend>
        <label class="checkbox">
          <input type="radio" name="when" data-testid="reminder-once" .checked=${!draft.repeat} @change=${() => this.#set({ repeat: false })} />
          ${strings.reminderOnce}
        </label>
        <label class="checkbox">
          <input type="radio" name="when" data-testid="reminder-repeat" .checked=${draft.repeat} @change=${() => this.#set({ repeat: true })} />
          ${strings.reminderRepeat}
        </label>
      </fieldset>
      ${draft.repeat
        ? html`<label for="reminder-cron">${strings.reminderCronLabel}</label>
            <input
              id="reminder-cron"
              type="text"
              data-testid="reminder-cron"
              spellcheck="false"
              autocomplete="off"
              aria-describedby="reminder-cron-help"
              .value=${draft.cron}
              @input=${(e: Event) => this.#set({ cron: (e.target as HTMLInputElement).value })}
            />
            <p class="hint" id="reminder-cron-help">${strings.reminderCronHelp}</p>`
        : html`<label for="reminder-at">${strings.reminderAtLabel}</label>
            <input
              id="reminder-at"
              type="datetime-local"
              data-testid="reminder-at"
              step="1"
              .value=${draft.at}
              @input=${(e: Event) => this.#set({ at: (e.target as HTMLInputElement).value })}
            />`}
      ${this.previewError
        ? html`<p class="notice error small" data-testid="reminder-preview-error">${this.previewError}</p>`
        : this.preview.length > 0
          ? html`<p class="heading small" id="preview-label">${strings.reminderPreview.replace('{zone}', this.#zone())}</p>
              <ul class="preview" data-testid="reminder-preview" aria-labelledby="preview-label">
                ${this.preview.map((time) => html`<li><time datetime=${time}>${formatTime(time)}</time></li>`)}
              </ul>`
          : nothing}
      <label for="reminder-missed">${strings.reminderMissedLabel}</label>
      <select id="reminder-missed" @change=${(e: Event) => this.#set({ missed: (e.target as HTMLSelectElement).value as MissedPolicy })}>
        <option value="skip" ?selected=${draft.missed === 'skip'}>${strings.reminderMissedSkip}</option>
        <option value="run_once" ?selected=${draft.missed === 'run_once'}>${strings.reminderMissedRunOnce}</option>
      </select>
      ${draft.kind === 'task'
        ? html`${this.editing ? nothing : this.#renderAgent(draft)}
            <p class="hint">${strings.reminderTaskHint}</p>
            <label class="checkbox readable">
              <input type="checkbox" data-testid="reminder-readable" .checked=${draft.readable} @change=${(e: Event) => this.#set({ readable: (e.target as HTMLInputElement).checked })} />
              ${strings.reminderReadable}
            </label>
            <p class="hint">${draft.readable ? strings.reminderTaskReadableOn : strings.reminderTaskReadableOff}</p>`
        : html`${this.editing ? nothing : this.#renderAudience(draft)}
            ${draft.audience === ''
              ? html`<label class="checkbox readable">
                    <input type="checkbox" data-testid="reminder-readable" .checked=${draft.readable} @change=${(e: Event) => this.#set({ readable: (e.target as HTMLInputElement).checked })} />
                    ${strings.reminderReadable}
                  </label>
                  <p class="hint">${draft.readable ? strings.reminderReadableOn : strings.reminderReadableOff}</p>`
              : nothing}`}
      <div class="actions">
        <button type="submit" class="primary" data-testid="reminder-save" ?disabled=${this.busy}>
          ${this.editing ? strings.reminderUpdate : strings.reminderSave}
        </button>
        ${this.editing
          ? html`<button type="button" @click=${() => {
              this.editing = null;
              this.draft = { ...EMPTY };
              this.#schedulePreview();
            }}>${strings.cancel}</button>`
          : nothing}
      </div>
    </form>`;
  }

  /** Which agent runs a new task. */
  #renderAgent(draft: Draft): TemplateResult {
    const agents = this.agents.length > 0 ? this.agents : [{ id: 'main', name: 'main' }];
    return html`<label for="reminder-agent">${strings.reminderAgent}</label>
      <select id="reminder-agent" data-testid="reminder-agent" @change=${(e: Event) => this.#set({ agent: (e.target as HTMLSelectElement).value })}>
        ${agents.map((agent) => html`<option value=${agent.id} ?selected=${draft.agent === agent.id}>${agent.name}</option>`)}
      </select>`;
  }

  /** Whom a new reminder is for: the person, everyone, or another member — said before it is saved. */
  #renderAudience(draft: Draft): TemplateResult {
    const members = this.login?.me.members ?? [];
    const hint = draft.audience === EVERYONE ? strings.reminderForEveryoneHint : draft.audience !== '' ? strings.reminderForHint : null;
    return html`<label for="reminder-for">${strings.reminderFor}</label>
      <select id="reminder-for" data-testid="reminder-for" aria-describedby="reminder-for-hint" @change=${(e: Event) => this.#set({ audience: (e.target as HTMLSelectElement).value })}>
        <option value="" ?selected=${draft.audience === ''}>${strings.reminderForMe}</option>
        <option value=${EVERYONE} ?selected=${draft.audience === EVERYONE}>${strings.reminderForEveryone}</option>
        ${members.map((name) => html`<option value=${name} ?selected=${draft.audience === name}>${name}</option>`)}
      </select>
      ${hint === null ? nothing : html`<p class="hint" id="reminder-for-hint">${hint}</p>`}`;
  }

  #renderList(): TemplateResult | typeof nothing {
    const jobs = this.#list.value;
    if (jobs === undefined) return nothing;
    if (jobs.length === 0) return html`<p class="muted" data-testid="reminders-empty">${strings.remindersEmpty}</p>`;
    return html`<ul class="rows">
      ${jobs.map((job) => this.#renderJob(job))}
    </ul>`;
  }

  #renderJob(job: Job): TemplateResult {
    const next = job.upcoming[0];
    const runs = this.runs.get(job.id);
    return html`<li data-testid="reminder" data-id=${job.id}>
      <div class="row-head">
        <span class="row-title">
          <h4>${job.text ?? strings.reminderNoWords}</h4>
          ${job.kind === 'task' ? html`<span class="tag plain" data-testid="reminder-task">${strings.reminderTaskTag.replace('{agent}', job.agent ?? 'main')}</span>` : nothing}
          ${job.paused ? html`<span class="tag plain">${strings.reminderPausedTag}</span>` : nothing}
          ${job.shared
            ? html`<span class="tag remote" data-testid="reminder-shared" title=${strings.reminderForEveryoneHint}>${strings.reminderSharedTag}</span>`
            : job.readable_while_away
              ? html`<span class="tag remote" title=${strings.reminderReadableOn}>${strings.reminderReadableTag}</span>`
              : nothing}
          ${job.set_by === null ? nothing : html`<span class="tag plain" data-testid="reminder-set-by">${strings.reminderSetByTag.replace('{name}', job.set_by)}</span>`}
        </span>
      </div>
      <p class="small" data-testid="reminder-next">
        ${job.cron === null ? strings.reminderOnceAt : strings.reminderRepeatsAs.replace('{pattern}', job.cron)}
        · ${next ? strings.reminderNext.replace('{time}', formatTime(next)) : job.paused ? strings.reminderPausedNext : strings.reminderOver}
      </p>
      <div class="actions">
        ${job.may_change ? this.#renderChanges(job) : html`<p class="hint">${strings.reminderNotYours}</p>`}
        <button type="button" data-testid="reminder-history" aria-expanded=${runs ? 'true' : 'false'} @click=${() => void this.#toggleHistory(job)}>
          ${strings.reminderHistory}
        </button>
        ${job.may_change
          ? html`<button type="button" class="danger" data-testid="reminder-delete" ?disabled=${this.busy} @click=${() => void this.#delete(job)}>
              ${strings.delete}
            </button>`
          : nothing}
      </div>
      ${runs ? this.#renderRuns(runs) : nothing}
    </li>`;
  }

  /** Snooze, pause and edit: for a reminder the person may change. */
  #renderChanges(job: Job): TemplateResult {
    const snoozeLabel = `${strings.reminderSnooze}: ${job.text ?? ''}`;
    return html`<select
        class="snooze"
        data-testid="reminder-snooze"
        aria-label=${snoozeLabel}
        ?disabled=${this.busy}
        @change=${(e: Event) => {
          const select = e.target as HTMLSelectElement;
          const length = select.value as Snooze | '';
          select.value = '';
          if (length !== '') void this.#snooze(job, length);
        }}
      >
        <option value="" selected>${strings.reminderSnooze}</option>
        <option value="10m">${strings.reminderSnoozeTen}</option>
        <option value="1h">${strings.reminderSnoozeHour}</option>
        <option value="tomorrow">${strings.reminderSnoozeTomorrow}</option>
      </select>
      ${job.next_run !== null || job.paused
        ? html`<button type="button" data-testid="reminder-pause" ?disabled=${this.busy} @click=${() => void this.#pause(job)}>
            ${job.paused ? strings.reminderResume : strings.reminderPause}
          </button>`
        : nothing}
      <button type="button" data-testid="reminder-edit" ?disabled=${this.busy} @click=${() => this.#edit(job)}>${strings.edit}</button>`;
  }

  #renderRuns(runs: readonly JobRun[]): TemplateResult {
    if (runs.length === 0) return html`<p class="hint" data-testid="reminder-runs">${strings.reminderNoRuns}</p>`;
    return html`<ul class="runs small" data-testid="reminder-runs">
      ${runs.map(
        (run) => html`<li data-status=${run.status}>
          <time datetime=${run.scheduled_for}>${formatTime(run.scheduled_for)}</time> · ${runStatus(run)}
        </li>`,
      )}
    </ul>`;
  }
}

/** A run's outcome in words. */
function runStatus(run: JobRun): string {
  switch (run.status) {
    case 'done':
      return run.late_ms !== null && run.late_ms > 60_000
        ? strings.reminderRunLate.replace('{minutes}', String(Math.round(run.late_ms / 60_000)))
        : strings.reminderRunDone;
    case 'missed':
      return strings.reminderRunMissed.replace('{count}', String(run.missed_count ?? 1));
    case 'waiting_for_unlock':
      return strings.reminderRunWaiting;
    case 'running':
      return strings.reminderRunRunning;
    case 'parked':
      return strings.reminderRunParked;
    case 'error':
      return strings.reminderRunError.replace('{why}', run.error ?? '');
  }
}

/** An RFC 3339 time as a `datetime-local` value in this computer's zone. */
function localInput(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-reminders': SkaldReminders;
  }
}
