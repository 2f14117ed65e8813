// Backups as the administrator's page reads them: how far the one running has got, which
// progress stands when an event and an answer cross, what each form sends — or why the
// page does not send it yet — and whom a backup may give back their space.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { loadModule } from './load.mjs';

let backups;

before(async () => {
  backups = await loadModule('state/backups.ts');
});

const progress = (id, stage, done = 0, total = 0) => ({ id, stage, done, total, path: `/media/usb/${id}.skb` });
const row = (id, state, extra = {}) => ({
  id,
  kind: 'manual',
  state,
  path: `/media/usb/${id}.skb`,
  started_by: null,
  started_at: '2026-12-05T10:00:00Z',
  finished_at: null,
  bytes: null,
  people: null,
  error: null,
  ...extra,
});
const list = (current, rows = [], schedule = null) => ({ current, backups: rows, schedule });

describe('progress', () => {
  test('is a whole percentage that reaches 100 only when the backup is done', () => {
    assert.equal(backups.backupPercent(progress('a', 'shared', 0, 0)), 0);
    assert.equal(backups.backupPercent(progress('a', 'people', 420, 1000)), 42);
    // The total is an estimate: files grow while Skald runs.
    assert.equal(backups.backupPercent(progress('a', 'finishing', 1200, 1000)), 99);
    assert.equal(backups.backupPercent(progress('a', 'done', 1200, 1200)), 100);
    assert.equal(backups.backupPercent(progress('a', 'failed', 0, 0)), 0);
  });

  test('every stage has its words', () => {
    for (const stage of ['shared', 'people', 'agents', 'models', 'finishing', 'done', 'failed']) {
      assert.match(backups.STAGE_LABELS[stage], /^backupStage/);
    }
  });

  test('an event that came before the answer to "back up now" stands', () => {
    const done = progress('a', 'done', 10, 10);
    assert.equal(backups.progressAfterStart(done, { id: 'a', path: done.path }), done);
    // Nothing heard of it yet: it starts at the start, whatever was shown before.
    assert.deepEqual(backups.progressAfterStart(progress('old', 'done'), { id: 'b', path: '/x/b.skb' }), {
      id: 'b',
      stage: 'shared',
      done: 0,
      total: 0,
      path: '/x/b.skb',
    });
  });

  test('the list shows the backup running, unless an event told more of it', () => {
    const listed = progress('a', 'people', 100, 1000);
    assert.equal(backups.progressAfterList(null, list(listed)), listed);
    const later = progress('a', 'agents', 900, 1000);
    assert.equal(backups.progressAfterList(later, list(listed)), later);
    assert.equal(backups.progressAfterList(progress('a', 'shared', 10, 1000), list(listed)), listed);
  });

  test('a followed backup no longer running ends as its row says', () => {
    const running = progress('a', 'finishing', 990, 1000);
    const done = backups.progressAfterList(running, list(null, [row('a', 'done', { bytes: 1004 })]));
    assert.deepEqual([done.stage, done.done, done.total], ['done', 1004, 1004]);
    assert.equal(backups.progressAfterList(running, list(null, [row('a', 'failed', { error: 'disk full' })])).stage, 'failed');
    // Recorded but not reporting yet: still running.
    assert.equal(backups.progressAfterList(running, list(null, [row('a', 'running')])), running);
    assert.equal(backups.progressAfterList(null, list(null, [row('a', 'done')])), null);
  });
});

describe('the "back up now" form', () => {
  const draft = { folder: ' /media/usb ', passphrase: 'granite orchard lighthouse', confirm: 'granite orchard lighthouse', includeModels: false };

  test('sends the folder trimmed, the passphrase and whether the model files go in', () => {
    assert.deepEqual(backups.backupRequest(draft), {
      ok: true,
      body: { to: '/media/usb', passphrase: 'granite orchard lighthouse', include_models: false },
    });
  });

  test('is not sent without a folder, a passphrase, or with the passphrase typed twice differently', () => {
    assert.deepEqual(backups.backupRequest({ ...draft, folder: ' ' }), { ok: false, problem: 'backupNeedsFolder', field: 'folder' });
    assert.deepEqual(backups.backupRequest({ ...draft, passphrase: '', confirm: '' }), { ok: false, problem: 'backupNeedsPassphrase', field: 'passphrase' });
    assert.deepEqual(backups.backupRequest({ ...draft, confirm: 'granite orchard lighthouses' }), {
      ok: false,
      problem: 'backupPassphrasesDiffer',
      field: 'confirm',
    });
  });

  test('leaves the strength of the passphrase and the folder to the server', () => {
    assert.equal(backups.backupRequest({ ...draft, folder: 'relative', passphrase: 'weak', confirm: 'weak' }).ok, true);
  });
});

describe('the schedule form', () => {
  const draft = { folder: '/media/usb', atTime: '03:30', zone: '', keep: '7', includeModels: true, passphrase: 'granite orchard lighthouse', confirm: 'granite orchard lighthouse' };

  test('the first time, needs a passphrase; an empty zone is the computer’s own', () => {
    assert.deepEqual(backups.scheduleRequest(draft, false), {
      ok: true,
      body: { folder: '/media/usb', at_time: '03:30', keep: 7, include_models: true, passphrase: 'granite orchard lighthouse' },
    });
    assert.deepEqual(backups.scheduleRequest({ ...draft, passphrase: '', confirm: '' }, false), {
      ok: false,
      problem: 'backupNeedsPassphrase',
      field: 'passphrase',
    });
  });

  test('once set, an empty passphrase keeps the stored one', () => {
    assert.deepEqual(backups.scheduleRequest({ ...draft, passphrase: '', confirm: '', zone: ' Europe/Rome ' }, true), {
      ok: true,
      body: { folder: '/media/usb', at_time: '03:30', keep: 7, include_models: true, zone: 'Europe/Rome' },
    });
  });

  test('refuses a missing time, a count to keep outside 1–100 and passphrases that differ', () => {
    assert.equal(backups.scheduleRequest({ ...draft, atTime: '' }, true).problem, 'backupNeedsTime');
    assert.equal(backups.scheduleRequest({ ...draft, atTime: '24:00' }, true).problem, 'backupNeedsTime');
    for (const keep of ['0', '101', '2.5', '', 'x']) assert.equal(backups.scheduleRequest({ ...draft, keep }, true).problem, 'backupKeepRange', keep);
    assert.equal(backups.scheduleRequest({ ...draft, confirm: 'other' }, true).problem, 'backupPassphrasesDiffer');
    // A time field that gives seconds too.
    assert.equal(backups.scheduleRequest({ ...draft, atTime: '03:30:00' }, true).body.at_time, '03:30');
  });

  test('is filled with the stored schedule, never its passphrase, or with the defaults', () => {
    const stored = { folder: '/b', at_time: '02:15', zone: 'UTC', keep: 3, include_models: false, next_run: '', updated_by: '', updated_at: '' };
    assert.deepEqual(backups.scheduleDraft(stored), { folder: '/b', atTime: '02:15', zone: 'UTC', keep: '3', includeModels: false, passphrase: '', confirm: '' });
    assert.deepEqual(backups.scheduleDraft(null), { folder: '', atTime: '03:00', zone: '', keep: '7', includeModels: false, passphrase: '', confirm: '' });
  });
});

describe('the "restore one person" form', () => {
  const draft = (change = {}) => ({ archive: ' /media/usb/skald-backup-2026-12-05-0300.skb ', passphrase: 'granite orchard lighthouse', person: 'u_bea', ...change });

  test('sends the archive\'s path trimmed, the passphrase as typed and the person\'s id', () => {
    assert.deepEqual(backups.restoreRequest(draft()), {
      ok: true,
      body: { from: '/media/usb/skald-backup-2026-12-05-0300.skb', passphrase: 'granite orchard lighthouse', user: 'u_bea' },
    });
  });

  test('is not sent without a path from the top of the disk, a passphrase or a person', () => {
    const problem = (change) => {
      const checked = backups.restoreRequest(draft(change));
      return checked.ok ? 'sent' : `${checked.field}: ${checked.problem}`;
    };
    assert.equal(problem({ archive: '  ' }), 'from: restoreNeedsArchive');
    assert.equal(problem({ archive: 'backups/skald.skb' }), 'from: restoreArchiveNotFull');
    assert.equal(problem({ archive: '~/skald.skb' }), 'from: restoreArchiveNotFull');
    assert.equal(problem({ passphrase: '' }), 'passphrase: restoreNeedsPassphrase');
    assert.equal(problem({ person: '' }), 'person: restoreNeedsPerson');
    assert.equal(problem({ passphrase: ' ' }), 'sent', 'the server judges what a passphrase opens');
  });

  test('a full path may be a Windows drive or a network share too', () => {
    for (const path of ['/srv/b.skb', 'C:\\Backups\\b.skb', 'd:/b.skb', '\\\\nas\\backups\\b.skb']) assert.ok(backups.isFullPath(path), path);
    for (const path of ['b.skb', './b.skb', 'C:b.skb', '\\b.skb']) assert.ok(!backups.isFullPath(path), path);
  });

  test('offers everyone who has a space, by name, not those yet to enrol', () => {
    const person = (id, name, status) => ({ id, name, role: 'member', status });
    const people = [person('u_cy', 'Cy', 'active'), person('u_di', 'Di', 'pending'), person('u_ada', 'Ada', 'active'), person('u_bo', 'Bo', 'deactivated')];
    assert.deepEqual(backups.restorablePeople(people).map((p) => p.name), ['Ada', 'Bo', 'Cy']);
  });
});
