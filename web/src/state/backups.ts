/**
 * Backups (docs/architecture.md §5.2) as the administrator's page reads them: how far
 * the one running has got, which word names its stage, what the three forms send (back
 * up now, every day, restore one person) and why one is not sent yet; whom a backup may
 * give back their space. Pure: no calls, no DOM, no timers. The server stays the judge of
 * a folder and a passphrase; its reasons are shown as it gives them.
 */
import type {
  Backup,
  BackupList,
  BackupProgress,
  BackupSchedule,
  BackupScheduleBody,
  BackupStage,
  BackupStarted,
  NewBackup,
  Person,
  RestorePersonBody,
} from '../api/types.js';
import type { TextKey } from '../i18n/en.js';

/** Each stage in words. */
export const STAGE_LABELS: Readonly<Record<BackupStage, TextKey>> = {
  shared: 'backupStageShared',
  people: 'backupStagePeople',
  agents: 'backupStageAgents',
  models: 'backupStageModels',
  finishing: 'backupStageFinishing',
  done: 'backupStageDone',
  failed: 'backupStageFailed',
};

/** Who started a backup (`Backup.kind`); the table shows an unknown kind as it is. */
export const KIND_LABELS: Readonly<Record<string, TextKey>> = {
  command_line: 'backupKindCommandLine',
  manual: 'backupKindManual',
  scheduled: 'backupKindScheduled',
};

/** How a backup went (`Backup.state`). */
export const STATE_LABELS: Readonly<Record<string, TextKey>> = {
  running: 'backupStateRunning',
  done: 'backupStateDone',
  failed: 'backupStateFailed',
};

export function isFinished(progress: BackupProgress): boolean {
  return progress.stage === 'done' || progress.stage === 'failed';
}

/**
 * How far, 0 to 100, in whole percent. The total is an estimate (files grow while Skald
 * runs), so the bar stops at 99 until the backup is done; nothing is known of a total of 0.
 */
export function backupPercent(progress: BackupProgress): number {
  if (progress.stage === 'done') return 100;
  if (!(progress.total > 0) || !(progress.done > 0)) return 0;
  return Math.min(99, Math.floor((progress.done / progress.total) * 100));
}

/**
 * What is shown once `POST /api/backups` answered. The first event may have come before
 * the answer (a small archive can be finished by then): that event stands.
 */
export function progressAfterStart(shown: BackupProgress | null, started: BackupStarted): BackupProgress {
  if (shown !== null && shown.id === started.id) return shown;
  return { id: started.id, stage: 'shared', done: 0, total: 0, path: started.path };
}

/**
 * What is shown after reading `GET /api/backups`: the one running there, unless an event
 * has already told more of it; and, for one that was followed here and is no longer
 * running, its end as the list records it (when its last event was missed).
 */
export function progressAfterList(shown: BackupProgress | null, list: BackupList): BackupProgress | null {
  const current = list.current;
  if (current !== null) {
    if (shown === null || shown.id !== current.id) return current;
    return isFinished(shown) || shown.done > current.done ? shown : current;
  }
  if (shown === null || isFinished(shown)) return shown;
  const row = list.backups.find((backup) => backup.id === shown.id);
  if (row?.state === 'done') {
    const bytes = row.bytes ?? shown.total;
    return { ...shown, stage: 'done', done: bytes, total: bytes };
  }
  if (row?.state === 'failed') return { ...shown, stage: 'failed', done: 0, total: 0 };
  return shown;
}

/** The recorded row of a backup, for its error or size once it ended. */
export function backupRow(list: BackupList | undefined, id: string): Backup | undefined {
  return list?.backups.find((backup) => backup.id === id);
}

/** Why a form is not sent yet, or what it sends. */
export type Checked<T> = { readonly ok: true; readonly body: T } | { readonly ok: false; readonly problem: TextKey; readonly field: string };

/** The "back up now" form as typed. */
export interface BackupDraft {
  readonly folder: string;
  readonly passphrase: string;
  readonly confirm: string;
  readonly includeModels: boolean;
}

/**
 * The body of `POST /api/backups`, or what is missing. Only what the page can know is
 * checked here — something typed, the passphrase twice the same; whether the folder
 * exists or the passphrase is strong enough the server says, in its own words.
 */
export function backupRequest(draft: BackupDraft): Checked<NewBackup> {
  const folder = draft.folder.trim();
  if (folder === '') return { ok: false, problem: 'backupNeedsFolder', field: 'folder' };
  if (draft.passphrase === '') return { ok: false, problem: 'backupNeedsPassphrase', field: 'passphrase' };
  if (draft.confirm !== draft.passphrase) return { ok: false, problem: 'backupPassphrasesDiffer', field: 'confirm' };
  return { ok: true, body: { to: folder, passphrase: draft.passphrase, include_models: draft.includeModels } };
}

/** The schedule form as typed; `keep` as the number field holds it. */
export interface ScheduleDraft {
  readonly folder: string;
  readonly atTime: string;
  readonly zone: string;
  readonly keep: string;
  readonly includeModels: boolean;
  readonly passphrase: string;
  readonly confirm: string;
}

/** How many backups a new schedule keeps, and when it runs, until the administrator says otherwise. */
export const SCHEDULE_DEFAULTS = { atTime: '03:00', keep: '7' } as const;

/** The schedule form filled with the schedule as stored, or with the defaults when there is none; never a passphrase. */
export function scheduleDraft(schedule: BackupSchedule | null): ScheduleDraft {
  if (schedule === null) {
    return { folder: '', atTime: SCHEDULE_DEFAULTS.atTime, zone: '', keep: SCHEDULE_DEFAULTS.keep, includeModels: false, passphrase: '', confirm: '' };
  }
  return {
    folder: schedule.folder,
    atTime: schedule.at_time,
    zone: schedule.zone,
    keep: String(schedule.keep),
    includeModels: schedule.include_models,
    passphrase: '',
    confirm: '',
  };
}

/**
 * The body of `PUT /api/backups/schedule`, or what is missing. A passphrase is needed
 * the first time (`exists` false); after that, an empty one keeps the stored one. An
 * empty zone is left out, so the server uses its computer's own.
 */
export function scheduleRequest(draft: ScheduleDraft, exists: boolean): Checked<BackupScheduleBody> {
  const folder = draft.folder.trim();
  const atTime = draft.atTime.trim().slice(0, 5);
  const keep = Number(draft.keep);
  if (!/^([01]\d|2[0-3]):[0-5]\d$/.test(atTime)) return { ok: false, problem: 'backupNeedsTime', field: 'time' };
  if (!Number.isInteger(keep) || keep < 1 || keep > 100 || draft.keep.trim() === '') {
    return { ok: false, problem: 'backupKeepRange', field: 'keep' };
  }
  if (folder === '') return { ok: false, problem: 'backupNeedsFolder', field: 'folder' };
  if (draft.passphrase === '' && !exists) return { ok: false, problem: 'backupNeedsPassphrase', field: 'passphrase' };
  if (draft.confirm !== draft.passphrase) return { ok: false, problem: 'backupPassphrasesDiffer', field: 'confirm' };
  const zone = draft.zone.trim();
  return {
    ok: true,
    body: {
      folder,
      at_time: atTime,
      keep,
      include_models: draft.includeModels,
      ...(zone === '' ? {} : { zone }),
      ...(draft.passphrase === '' ? {} : { passphrase: draft.passphrase }),
    },
  };
}

/** The "restore one person" form as typed: the archive's path, its passphrase, the person's id. */
export interface RestoreDraft {
  readonly archive: string;
  readonly passphrase: string;
  readonly person: string;
}

export const EMPTY_RESTORE: RestoreDraft = { archive: '', passphrase: '', person: '' };

/**
 * Whether a path starts from the top of a disk (`/…`, `C:\…`, `\\server\…`): the server
 * reads the archive where it runs, so a path relative to some folder would mean nothing
 * the administrator can see.
 */
export function isFullPath(path: string): boolean {
  return path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith('\\\\');
}

/**
 * The body of `POST /api/backups/restore-person`, or what is missing. Whether the file
 * is there, the passphrase opens it and the person is in it, the server says.
 */
export function restoreRequest(draft: RestoreDraft): Checked<RestorePersonBody> {
  const archive = draft.archive.trim();
  if (archive === '') return { ok: false, problem: 'restoreNeedsArchive', field: 'from' };
  if (!isFullPath(archive)) return { ok: false, problem: 'restoreArchiveNotFull', field: 'from' };
  if (draft.passphrase === '') return { ok: false, problem: 'restoreNeedsPassphrase', field: 'passphrase' };
  if (draft.person === '') return { ok: false, problem: 'restoreNeedsPerson', field: 'person' };
  return { ok: true, body: { from: archive, passphrase: draft.passphrase, user: draft.person } };
}

/** Whom a backup may give back their space: everyone who has one (not those yet to enrol), by name. */
export function restorablePeople(people: readonly Person[]): Person[] {
  return people.filter((person) => person.status !== 'pending').sort((a, b) => a.name.localeCompare(b.name));
}
