/**
 * Backups (docs/architecture.md §5.2), for an administrator: write one now to a folder,
 * sealed with a passphrase, and follow it as it goes; the recent ones, however they were
 * started; the daily schedule; and one person's space brought back from an archive while
 * everyone else goes on. The page says plainly what an archive holds, what a restore does
 * not bring back, and — before one person is restored, their name typed to confirm — what
 * they lose. A passphrase stays in its field only until the form is sent, and is never
 * shown again; the server judges its strength, the folder and the archive, and its
 * reasons are shown as it gives them.
 *
 * Progress comes as the live socket's `backup` events; when none has come for a while
 * (the socket reconnecting) the list is read again instead, and it tells how the backup
 * ended.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';

import { ApiError } from '../../api/client.js';
import type { Backup, BackupList, BackupProgress, BackupSchedule, Person, PersonRestored } from '../../api/types.js';
import { ActionController } from '../../controllers/action-controller.js';
import { LiveEventsController } from '../../controllers/live-events-controller.js';
import { ResourceController } from '../../controllers/resource-controller.js';
import { strings } from '../../i18n/en.js';
import { sentence } from '../../i18n/errors.js';
import { formatNumber, formatTime } from '../../i18n/format.js';
import { plural } from '../../i18n/locale.js';
import {
  KIND_LABELS,
  STAGE_LABELS,
  STATE_LABELS,
  backupPercent,
  EMPTY_RESTORE,
  backupRequest,
  backupRow,
  isFinished,
  progressAfterList,
  progressAfterStart,
  restorablePeople,
  restoreRequest,
  scheduleDraft,
  scheduleRequest,
  type RestoreDraft,
  type ScheduleDraft,
} from '../../state/backups.js';
import { formatBytes } from '../../state/local-models.js';
import type { Login } from '../../state/login.js';
import { controls, page } from '../../styles/controls.js';
import type { SkaldConfirm } from '../skald-confirm/skald-confirm.js';
import '../skald-confirm/skald-confirm.js';
import { styles } from './skald-admin-backups.styles.js';

/** How long without a `backup` event before the list is read instead, and how often. */
const POLL_MS = 2000;

/**
 * Test hooks: `#backup-folder`, `#backup-passphrase`, `#backup-confirm`,
 * `#backup-models`, `[data-testid=backup-start]`, `[data-testid=backup-error]`;
 * `[data-testid=backup-status]` (its `data-stage`) holding `backup-progress` (the
 * progress bar), `backup-path` once done, `backup-failed`; `[data-testid=backup-row]`
 * (its `data-id`, `data-kind`, `data-state`), `backup-none`; `#schedule-time`,
 * `#schedule-zone`, `#schedule-keep`, `#schedule-folder`, `#schedule-models`,
 * `#schedule-passphrase`, `#schedule-confirm`, `[data-testid=schedule-save]`,
 * `schedule-stop`, `schedule-next`, `schedule-none`, `schedule-error`; `#restore-from`,
 * `#restore-passphrase`, `#restore-person`, `[data-testid=restore-start]`,
 * `restore-error`, `restore-done` (with `restore-reset` when supervision went back to
 * waiting).
 *
 * @summary Backups: now, the recent ones, every day, and one person restored.
 */
@customElement('skald-admin-backups')
export class SkaldAdminBackups extends LitElement {
  static override styles = [controls, page, styles];

  @property({ attribute: false }) login: Login | null = null;

  @state() private folder = '';
  @state() private passphrase = '';
  @state() private confirm = '';
  @state() private includeModels = false;
  /** The backup followed here: started on this page, or found running. */
  @state() private progress: BackupProgress | null = null;
  @state() private schedule: ScheduleDraft = scheduleDraft(null);
  @state() private restore: RestoreDraft = EMPTY_RESTORE;
  /** What the last restore here did, until another is sent. */
  @state() private restored: PersonRestored | null = null;
  /** The id of the field a form's last check found wanting, for `aria-invalid`. */
  @state() private invalid = '';
  @state() private announcement = '';

  @query('skald-confirm') private confirmDialog?: SkaldConfirm;

  readonly #start = new ActionController(this);
  readonly #scheduling = new ActionController(this);
  readonly #restoring = new ActionController(this);
  /** Whether the schedule form holds the stored schedule yet (filled once, then the administrator's). */
  #scheduleFilled = false;
  #lastEvent = 0;
  #timer: ReturnType<typeof setInterval> | undefined;

  readonly #list = new ResourceController<BackupList>(this, async (signal) => {
    const client = this.login?.client;
    if (!client) throw new ApiError('network', '', 0);
    const list = await client.backups(signal);
    this.#took(list);
    return list;
  });

  /** Whom a backup may give back their space: everyone enrolled. */
  readonly #people = new ResourceController<readonly Person[]>(this, async (signal) => {
    const client = this.login?.client;
    if (!client) throw new ApiError('network', '', 0);
    return restorablePeople(await client.everyone(signal));
  });

  constructor() {
    super();
    new LiveEventsController(this, () => this.login?.live ?? null, {
      onEvent: (event) => {
        if (event.type !== 'backup') return;
        this.#lastEvent = Date.now();
        // Its row now says how it ended (an error, a size): read the list again.
        if (this.#show(event.progress)) void this.#list.reload();
      },
      onResync: () => void this.#list.reload(),
    });
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.#follow();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  override render(): TemplateResult {
    const list = this.#list.value;
    return html`
      <p class="lead">${strings.backupsLead}</p>
      ${this.#renderNow()}
      ${this.#renderList(list)}
      ${this.#renderSchedule(list)}
      ${this.#renderRestore()}
      <p class="visually-hidden" role="status" aria-live="polite">${this.announcement}</p>
      <skald-confirm></skald-confirm>
    `;
  }

  // ---- back up now -----------------------------------------------------------

  #renderNow(): TemplateResult {
    const mismatch = this.confirm !== '' && this.confirm !== this.passphrase;
    const running = this.progress !== null && !isFinished(this.progress);
    return html`<section class="block" aria-labelledby="backup-now-title">
      <h3 id="backup-now-title">${strings.backupNowTitle}</h3>
      <ul class="points">
        <li>${strings.backupHolds}</li>
        <li>${strings.backupSealed}</li>
        <li>${strings.backupLogins}</li>
        <li>${strings.backupKeys}</li>
      </ul>
      <form @submit=${this.#startBackup} novalidate>
        <div class="field">
          <label for="backup-folder">${strings.backupFolder}</label>
          <input
            id="backup-folder"
            type="text"
            autocomplete="off"
            spellcheck="false"
            aria-describedby="backup-folder-hint"
            aria-invalid=${this.invalid === 'backup-folder' ? 'true' : 'false'}
            .value=${this.folder}
            @input=${(e: Event) => (this.folder = (e.target as HTMLInputElement).value)}
          />
          <p class="hint" id="backup-folder-hint">${strings.backupFolderHint}</p>
        </div>
        <div class="grid-fields">
          <div class="field">
            <label for="backup-passphrase">${strings.backupPassphrase}</label>
            <input
              id="backup-passphrase"
              type="password"
              autocomplete="new-password"
              aria-describedby="backup-passphrase-hint"
              aria-invalid=${this.invalid === 'backup-passphrase' ? 'true' : 'false'}
              .value=${this.passphrase}
              @input=${(e: Event) => (this.passphrase = (e.target as HTMLInputElement).value)}
            />
            <p class="hint" id="backup-passphrase-hint">${strings.backupPassphraseHint}</p>
          </div>
          <div class="field">
            <label for="backup-confirm">${strings.backupConfirm}</label>
            <input
              id="backup-confirm"
              type="password"
              autocomplete="new-password"
              aria-invalid=${mismatch || this.invalid === 'backup-confirm' ? 'true' : 'false'}
              aria-describedby=${mismatch ? 'backup-mismatch' : nothing}
              .value=${this.confirm}
              @input=${(e: Event) => (this.confirm = (e.target as HTMLInputElement).value)}
            />
            ${mismatch ? html`<p class="hint error-text" id="backup-mismatch">${strings.backupPassphrasesDiffer}</p>` : nothing}
          </div>
        </div>
        <div class="check">
          <input
            id="backup-models"
            type="checkbox"
            aria-describedby="backup-models-hint"
            .checked=${this.includeModels}
            @change=${(e: Event) => (this.includeModels = (e.target as HTMLInputElement).checked)}
          />
          <div>
            <label for="backup-models">${strings.backupIncludeModels}</label>
            <p class="hint" id="backup-models-hint">${strings.backupIncludeModelsHint}</p>
          </div>
        </div>
        ${this.#start.error ? html`<p class="notice error" role="alert" data-testid="backup-error">${this.#start.error}</p>` : nothing}
        <div class="actions">
          <button type="submit" class="primary" data-testid="backup-start" ?disabled=${this.#start.busy || running}>
            ${this.#start.busy ? strings.working : strings.backupStart}
          </button>
        </div>
      </form>
      ${this.#renderProgress()}
    </section>`;
  }

  #renderProgress(): TemplateResult | typeof nothing {
    const progress = this.progress;
    if (progress === null) return nothing;
    if (progress.stage === 'done') {
      return html`<div class="outcome notice ok" id="backup-outcome" tabindex="-1" data-testid="backup-status" data-stage="done">
        <p>${strings.backupDone}</p>
        <p><code data-testid="backup-path">${progress.path}</code></p>
      </div>`;
    }
    if (progress.stage === 'failed') {
      const reason = backupRow(this.#list.value, progress.id)?.error ?? null;
      return html`<div class="outcome notice error" id="backup-outcome" tabindex="-1" data-testid="backup-status" data-stage="failed">
        <p data-testid="backup-failed">${reason ? strings.backupFailed.replace('{reason}', sentence(reason)) : strings.backupFailedNoReason}</p>
      </div>`;
    }
    const percent = backupPercent(progress);
    const text = strings.backupProgressText.replace('{stage}', strings[STAGE_LABELS[progress.stage]]).replace('{percent}', formatNumber(percent));
    return html`<div class="outcome progress" id="backup-outcome" tabindex="-1" data-testid="backup-status" data-stage=${progress.stage}>
      <p class="small">${strings.backupRunning.replace('{path}', progress.path)}</p>
      <div
        role="progressbar"
        data-testid="backup-progress"
        aria-label=${strings.backupProgressLabel}
        aria-valuemin="0"
        aria-valuemax="100"
        aria-valuenow=${percent}
        aria-valuetext=${text}
      >
        <progress max="100" .value=${percent} aria-hidden="true"></progress>
      </div>
      <p class="hint num" aria-hidden="true" data-testid="backup-stage">${text}</p>
    </div>`;
  }

  async #startBackup(event: Event): Promise<void> {
    event.preventDefault();
    const client = this.login?.client;
    if (!client) return;
    const checked = backupRequest({ folder: this.folder, passphrase: this.passphrase, confirm: this.confirm, includeModels: this.includeModels });
    if (!checked.ok) {
      this.#refuse(this.#start, `backup-${checked.field}`, strings[checked.problem]);
      return;
    }
    this.invalid = '';
    await this.#start.run(
      async () => {
        const started = await client.startBackup(checked.body);
        this.#lastEvent = Date.now();
        // Gone from the page once sent: the archive is sealed with it, nothing else needs it.
        this.passphrase = '';
        this.confirm = '';
        this.announcement = strings.backupRunning.replace('{path}', started.path);
        this.#show(progressAfterStart(this.progress, started));
      },
      {
        done: async () => {
          void this.#list.reload();
          // The button is disabled while it runs: focus goes to what tells how it goes.
          await this.updateComplete;
          this.renderRoot.querySelector<HTMLElement>('#backup-outcome')?.focus();
        },
      },
    );
  }

  /**
   * Shows `next` as the backup followed here; true when that is the end of one that was
   * running (which is then announced).
   */
  #show(next: BackupProgress | null): boolean {
    const before = this.progress;
    this.progress = next;
    const ended = next !== null && isFinished(next) && (before === null || before.id !== next.id || !isFinished(before));
    if (ended) {
      this.announcement = next.stage === 'done' ? `${strings.backupDone} ${next.path}` : strings.backupFailedNoReason;
    }
    this.#follow();
    return ended;
  }

  /** Reads the list once a while while a backup runs and no event says how it goes. */
  #follow(): void {
    const running = this.progress !== null && !isFinished(this.progress);
    if (running && this.isConnected && this.#timer === undefined) {
      this.#timer = setInterval(() => {
        if (Date.now() - this.#lastEvent >= POLL_MS) void this.#list.reload();
      }, POLL_MS);
    } else if (!running && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  /** What a fresh list says: the backup running, how a followed one ended, the schedule stored. */
  #took(list: BackupList): void {
    this.#show(progressAfterList(this.progress, list));
    if (!this.#scheduleFilled) {
      this.#scheduleFilled = true;
      this.schedule = scheduleDraft(list.schedule);
    }
  }

  // ---- recent backups ----------------------------------------------------------

  #renderList(list: BackupList | undefined): TemplateResult {
    return html`<section class="block" aria-labelledby="backup-list-title">
      <h3 id="backup-list-title">${strings.backupListTitle}</h3>
      ${this.#list.status()}
      ${list === undefined
        ? nothing
        : list.backups.length === 0
          ? html`<p data-testid="backup-none">${strings.backupListNone}</p>`
          : html`<div class="table-wrap" role="region" aria-labelledby="backup-list-caption" tabindex="0">
              <table>
                <caption id="backup-list-caption" class="visually-hidden">${strings.backupListCaption}</caption>
                <thead>
                  <tr>
                    <th scope="col">${strings.backupStarted}</th>
                    <th scope="col">${strings.backupKind}</th>
                    <th scope="col">${strings.backupState}</th>
                    <th scope="col" class="num">${strings.backupSize}</th>
                    <th scope="col" class="num">${strings.backupPeople}</th>
                    <th scope="col">${strings.backupPath}</th>
                  </tr>
                </thead>
                <tbody>
                  ${list.backups.map((backup) => this.#renderRow(backup))}
                </tbody>
              </table>
            </div>`}
    </section>`;
  }

  #renderRow(backup: Backup): TemplateResult {
    const kind = KIND_LABELS[backup.kind];
    const state = STATE_LABELS[backup.state];
    const tone = backup.state === 'done' ? 'ok' : backup.state === 'failed' ? 'bad' : 'plain';
    return html`<tr data-testid="backup-row" data-id=${backup.id} data-kind=${backup.kind} data-state=${backup.state}>
      <th scope="row">${formatTime(backup.started_at)}</th>
      <td>${kind ? strings[kind] : backup.kind}</td>
      <td>
        <span class="tag ${tone}">${state ? strings[state] : backup.state}</span>
        ${backup.state === 'failed' && backup.error ? html`<span class="small why" data-testid="backup-row-error">${sentence(backup.error)}</span>` : nothing}
      </td>
      <td class="num">${backup.bytes === null ? nothing : formatBytes(backup.bytes)}</td>
      <td class="num">${backup.people === null ? nothing : formatNumber(backup.people)}</td>
      <td class="path"><code>${backup.path}</code></td>
    </tr>`;
  }

  // ---- every day -------------------------------------------------------------

  #renderSchedule(list: BackupList | undefined): TemplateResult {
    const stored = list?.schedule ?? null;
    const draft = this.schedule;
    const mismatch = draft.confirm !== '' && draft.confirm !== draft.passphrase;
    const invalid = (id: string): 'true' | 'false' => (this.invalid === id ? 'true' : 'false');
    return html`<section class="block" aria-labelledby="schedule-title">
      <h3 id="schedule-title" tabindex="-1">${strings.backupScheduleTitle}</h3>
      <p>${strings.backupScheduleLead}</p>
      ${list === undefined ? nothing : this.#renderStored(stored)}
      <form @submit=${this.#saveSchedule} novalidate>
        <div class="grid-fields">
          <div class="field">
            <label for="schedule-time">${strings.backupScheduleTime}</label>
            <input
              id="schedule-time"
              type="time"
              aria-invalid=${invalid('schedule-time')}
              .value=${draft.atTime}
              @input=${(e: Event) => this.#edit({ atTime: (e.target as HTMLInputElement).value })}
            />
          </div>
          <div class="field">
            <label for="schedule-zone">${strings.backupScheduleZone}</label>
            <input
              id="schedule-zone"
              type="text"
              autocomplete="off"
              spellcheck="false"
              aria-describedby="schedule-zone-hint"
              .value=${draft.zone}
              @input=${(e: Event) => this.#edit({ zone: (e.target as HTMLInputElement).value })}
            />
            <p class="hint" id="schedule-zone-hint">${strings.backupScheduleZoneHint}</p>
          </div>
          <div class="field">
            <label for="schedule-keep">${strings.backupScheduleKeep}</label>
            <input
              id="schedule-keep"
              type="number"
              min="1"
              max="100"
              step="1"
              inputmode="numeric"
              aria-describedby="schedule-keep-hint"
              aria-invalid=${invalid('schedule-keep')}
              .value=${draft.keep}
              @input=${(e: Event) => this.#edit({ keep: (e.target as HTMLInputElement).value })}
            />
            <p class="hint" id="schedule-keep-hint">${strings.backupScheduleKeepHint}</p>
          </div>
        </div>
        <div class="field">
          <label for="schedule-folder">${strings.backupFolder}</label>
          <input
            id="schedule-folder"
            type="text"
            autocomplete="off"
            spellcheck="false"
            aria-describedby="schedule-folder-hint"
            aria-invalid=${invalid('schedule-folder')}
            .value=${draft.folder}
            @input=${(e: Event) => this.#edit({ folder: (e.target as HTMLInputElement).value })}
          />
          <p class="hint" id="schedule-folder-hint">${strings.backupFolderHint}</p>
        </div>
        <div class="check">
          <input
            id="schedule-models"
            type="checkbox"
            .checked=${draft.includeModels}
            @change=${(e: Event) => this.#edit({ includeModels: (e.target as HTMLInputElement).checked })}
          />
          <label for="schedule-models">${strings.backupIncludeModels}</label>
        </div>
        <div class="grid-fields">
          <div class="field">
            <label for="schedule-passphrase">${strings.backupPassphrase}</label>
            <input
              id="schedule-passphrase"
              type="password"
              autocomplete="new-password"
              aria-describedby="schedule-passphrase-hint"
              aria-invalid=${invalid('schedule-passphrase')}
              .value=${draft.passphrase}
              @input=${(e: Event) => this.#edit({ passphrase: (e.target as HTMLInputElement).value })}
            />
            <p class="hint" id="schedule-passphrase-hint">
              ${stored === null ? strings.backupSchedulePassphraseHint : strings.backupSchedulePassphraseKeep}
            </p>
          </div>
          <div class="field">
            <label for="schedule-confirm">${strings.backupConfirm}</label>
            <input
              id="schedule-confirm"
              type="password"
              autocomplete="new-password"
              aria-invalid=${mismatch || this.invalid === 'schedule-confirm' ? 'true' : 'false'}
              aria-describedby=${mismatch ? 'schedule-mismatch' : nothing}
              .value=${draft.confirm}
              @input=${(e: Event) => this.#edit({ confirm: (e.target as HTMLInputElement).value })}
            />
            ${mismatch ? html`<p class="hint error-text" id="schedule-mismatch">${strings.backupPassphrasesDiffer}</p>` : nothing}
          </div>
        </div>
        ${this.#scheduling.error
          ? html`<p class="notice error" role="alert" data-testid="schedule-error">${this.#scheduling.error}</p>`
          : nothing}
        <div class="actions">
          <button type="submit" class="primary" data-testid="schedule-save" ?disabled=${this.#scheduling.busy || list === undefined}>
            ${strings.backupScheduleSave}
          </button>
          ${stored === null
            ? nothing
            : html`<button type="button" class="danger" data-testid="schedule-stop" ?disabled=${this.#scheduling.busy} @click=${() => void this.#stopSchedule()}>
                ${strings.backupScheduleStop}
              </button>`}
        </div>
      </form>
    </section>`;
  }

  #renderStored(stored: BackupSchedule | null): TemplateResult {
    if (stored === null) return html`<p class="muted" data-testid="schedule-none">${strings.backupScheduleNone}</p>`;
    const summary = plural(stored.keep, strings.backupScheduleSummary)
      .replace('{time}', stored.at_time)
      .replace('{zone}', stored.zone)
      .replace('{folder}', stored.folder)
      .replace('{n}', formatNumber(stored.keep));
    return html`<div class="schedule-now">
      <p data-testid="schedule-next"><strong>${strings.backupScheduleNext.replace('{time}', formatTime(stored.next_run))}</strong></p>
      <p class="small muted" data-testid="schedule-summary">${summary}</p>
    </div>`;
  }

  #edit(change: Partial<ScheduleDraft>): void {
    this.schedule = { ...this.schedule, ...change };
  }

  async #saveSchedule(event: Event): Promise<void> {
    event.preventDefault();
    const client = this.login?.client;
    const list = this.#list.value;
    if (!client || list === undefined) return;
    const checked = scheduleRequest(this.schedule, list.schedule !== null);
    if (!checked.ok) {
      this.#refuse(this.#scheduling, `schedule-${checked.field}`, strings[checked.problem]);
      return;
    }
    this.invalid = '';
    await this.#scheduling.run(
      async () => {
        const saved = await client.setBackupSchedule(checked.body);
        const now = this.#list.value ?? list;
        this.#list.set({ ...now, schedule: saved });
        this.schedule = scheduleDraft(saved);
        this.announcement = strings.backupScheduleSaved.replace('{time}', formatTime(saved.next_run));
      },
      { done: () => undefined },
    );
  }

  async #stopSchedule(): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    const confirmed = await this.confirmDialog?.ask({
      title: strings.backupScheduleStopTitle,
      body: strings.backupScheduleStopBody,
      action: strings.backupScheduleStop,
    });
    if (!confirmed) return;
    await this.#scheduling.run(() => client.clearBackupSchedule(), {
      done: async () => {
        const now = this.#list.value;
        if (now !== undefined) this.#list.set({ ...now, schedule: null });
        this.#edit({ passphrase: '', confirm: '' });
        this.announcement = strings.backupScheduleStopped;
        // The button that had focus is gone: focus goes to the section's heading.
        await this.updateComplete;
        this.renderRoot.querySelector<HTMLElement>('#schedule-title')?.focus();
      },
    });
  }

  // ---- restore one person ----------------------------------------------------

  #renderRestore(): TemplateResult {
    const draft = this.restore;
    const people = this.#people.value;
    const invalid = (id: string): 'true' | 'false' => (this.invalid === id ? 'true' : 'false');
    return html`<section class="block" aria-labelledby="restore-title">
      <h3 id="restore-title">${strings.restoreTitle}</h3>
      <p>${strings.restoreLead}</p>
      ${this.#people.status()}
      <form @submit=${this.#restorePerson} novalidate>
        <div class="field">
          <label for="restore-from">${strings.restoreArchive}</label>
          <input
            id="restore-from"
            type="text"
            autocomplete="off"
            spellcheck="false"
            aria-describedby="restore-from-hint"
            aria-invalid=${invalid('restore-from')}
            .value=${draft.archive}
            @input=${(e: Event) => this.#editRestore({ archive: (e.target as HTMLInputElement).value })}
          />
          <p class="hint" id="restore-from-hint">${strings.restoreArchiveHint}</p>
        </div>
        <div class="grid-fields">
          <div class="field">
            <label for="restore-passphrase">${strings.restorePassphrase}</label>
            <input
              id="restore-passphrase"
              type="password"
              autocomplete="off"
              aria-describedby="restore-passphrase-hint"
              aria-invalid=${invalid('restore-passphrase')}
              .value=${draft.passphrase}
              @input=${(e: Event) => this.#editRestore({ passphrase: (e.target as HTMLInputElement).value })}
            />
            <p class="hint" id="restore-passphrase-hint">${strings.restorePassphraseHint}</p>
          </div>
          <div class="field">
            <label for="restore-person">${strings.restorePerson}</label>
            <select
              id="restore-person"
              aria-invalid=${invalid('restore-person')}
              .value=${draft.person}
              @change=${(e: Event) => this.#editRestore({ person: (e.target as HTMLSelectElement).value })}
            >
              <option value="" ?selected=${draft.person === ''}>${strings.restorePersonChoose}</option>
              ${(people ?? []).map((person) => html`<option value=${person.id} ?selected=${draft.person === person.id}>${person.name}</option>`)}
            </select>
          </div>
        </div>
        ${this.#restoring.error ? html`<p class="notice error" role="alert" data-testid="restore-error">${this.#restoring.error}</p>` : nothing}
        <div class="actions">
          <button type="submit" class="danger" data-testid="restore-start" ?disabled=${this.#restoring.busy || people === undefined}>
            ${this.#restoring.busy ? strings.working : strings.restoreStart}
          </button>
        </div>
      </form>
      ${this.#renderRestored()}
    </section>`;
  }

  #renderRestored(): TemplateResult | typeof nothing {
    const done = this.restored;
    if (done === null) return nothing;
    return html`<div class="outcome notice ok" id="restore-outcome" tabindex="-1" data-testid="restore-done">
      <p>${restoredText(done)}</p>
      ${done.supervision_reset > 0 ? html`<p data-testid="restore-reset">${resetText(done.supervision_reset)}</p>` : nothing}
    </div>`;
  }

  #editRestore(change: Partial<RestoreDraft>): void {
    this.restore = { ...this.restore, ...change };
  }

  /**
   * Restores one person after their name is typed in a confirmation that says what they
   * lose. The passphrase leaves the page once sent, whatever the answer.
   */
  async #restorePerson(event: Event): Promise<void> {
    event.preventDefault();
    const client = this.login?.client;
    if (!client || this.#restoring.busy) return;
    const checked = restoreRequest(this.restore);
    if (!checked.ok) {
      this.#refuse(this.#restoring, `restore-${checked.field}`, strings[checked.problem]);
      return;
    }
    this.invalid = '';
    this.#restoring.error = '';
    const name = this.#people.value?.find((person) => person.id === checked.body.user)?.name ?? '';
    const confirmed = await this.confirmDialog?.ask({
      title: strings.restoreConfirmTitle.replace('{name}', name),
      body: strings.restoreConfirmBody.replaceAll('{name}', name),
      action: strings.restoreConfirm.replace('{name}', name),
      typed: name,
    });
    if (!confirmed) return;
    this.restored = null;
    await this.#restoring.run(
      async () => {
        try {
          this.restored = await client.restorePerson(checked.body);
        } finally {
          this.#editRestore({ passphrase: '' });
        }
      },
      {
        done: async () => {
          this.#editRestore({ person: '' });
          if (this.restored !== null) this.announcement = restoredText(this.restored);
          await this.updateComplete;
          this.renderRoot.querySelector<HTMLElement>('#restore-outcome')?.focus();
        },
      },
    );
  }

  /** A form the page itself refuses: why, and the field to mend focused. */
  #refuse(action: ActionController, field: string, why: string): void {
    action.error = why;
    this.invalid = field;
    void this.updateComplete.then(() => this.renderRoot.querySelector<HTMLElement>(`#${field}`)?.focus());
  }
}

/** A person restored, in words: whose space, from when, and which password opens it. */
function restoredText(done: PersonRestored): string {
  return strings.restoreDone.replaceAll('{name}', done.name).replace('{time}', formatTime(done.backup_made_at));
}

/** How many supervision edges went back to waiting, in words. */
function resetText(count: number): string {
  return plural(count, strings.restoreSupervisionReset).replace('{n}', formatNumber(count));
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-admin-backups': SkaldAdminBackups;
  }
}
