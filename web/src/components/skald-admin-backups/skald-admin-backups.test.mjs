// The Backups section in Chromium, the server played through the page's routing and the
// live socket by the test: how far a backup is, as a progress bar in numbers and words,
// from the `backup` events; how it ended, with the reason its record gives; and, when
// no event comes, the list read again to learn the end. Restoring one person: nobody yet
// to enrol is offered, nothing is sent until their name is typed in a confirmation that
// says what they lose, and the answer — or the server's refusal — is shown as it came.
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { componentFixture } from '../../../tests/mount.mjs';

const PASSPHRASE = 'granite orchard lighthouse';

const progress = (id, stage, done, total) => ({ id, stage, done, total, path: `/media/usb/${id}.skb` });
const row = (id, state, extra = {}) => ({
  id,
  kind: 'manual',
  state,
  path: `/media/usb/${id}.skb`,
  started_by: 'user_ada',
  started_at: '2026-12-05T10:00:00Z',
  finished_at: state === 'running' ? null : '2026-12-05T10:01:00Z',
  bytes: null,
  people: null,
  error: null,
  ...extra,
});

/** What the played server answers, and what it was sent. */
let server;

const PEOPLE = [
  { id: 'u_ada', name: 'Ada', role: 'admin', status: 'active' },
  { id: 'u_cy', name: 'Cy', role: 'restricted', status: 'active' },
  { id: 'u_di', name: 'Di', role: 'member', status: 'pending' },
  { id: 'u_bea', name: 'Bea', role: 'member', status: 'deactivated' },
];

beforeEach(() => {
  server = {
    list: { current: null, backups: [], schedule: null },
    posted: [],
    reads: 0,
    onPost: () => undefined,
    restores: [],
    restore: () => ({ json: { name: 'Cy', backup_made_at: '2026-12-05T03:00:00Z', supervision_reset: 1 } }),
  };
});

async function api(route, request) {
  const { pathname } = new URL(request.url());
  if (request.method() === 'GET' && pathname === '/api/backups') {
    server.reads += 1;
    return route.fulfill({ json: server.list });
  }
  if (request.method() === 'POST' && pathname === '/api/backups') {
    server.posted.push(request.postDataJSON());
    server.onPost();
    return route.fulfill({ status: 202, json: { id: 'bk_new', path: '/media/usb/bk_new.skb' } });
  }
  if (request.method() === 'GET' && pathname === '/api/people') return route.fulfill({ json: PEOPLE });
  if (request.method() === 'POST' && pathname === '/api/backups/restore-person') {
    server.restores.push(request.postDataJSON());
    return route.fulfill(server.restore());
  }
  return route.fulfill({ status: 404, json: { error: { code: 'not_found', message: 'no such route here' } } });
}

describe('the Backups section', () => {
  const { page } = componentFixture(['components/skald-admin-backups/skald-admin-backups.ts', 'api/client.ts', 'state/live.ts'], () => ({ api }));

  /** Mounts the section with a login whose live socket the test speaks for. */
  const show = () =>
    page.evaluate(async () => {
      const { ApiClient } = window.skald['api/client.ts'];
      window.live = new EventTarget();
      const element = document.createElement('skald-admin-backups');
      element.login = { client: new ApiClient('token', { baseUrl: location.origin }), live: window.live };
      document.body.append(element);
      await element.updateComplete;
    });
  const send = (event) =>
    page.evaluate((event) => {
      const { LiveEventMessage } = window.skald['state/live.ts'];
      window.live.dispatchEvent(new LiveEventMessage({ type: 'backup', progress: event }));
    }, event);
  const bar = () => page.getByRole('progressbar', { name: 'Backup progress' });
  const status = (stage) => page.locator(`[data-testid=backup-status][data-stage=${stage}]`);

  test('a backup found running shows how far it is, in numbers and words, until it is done', async () => {
    server.list = { current: progress('bk_1', 'people', 250, 1000), backups: [row('bk_1', 'running')], schedule: null };
    await show();
    await bar().waitFor();
    assert.equal(await bar().getAttribute('aria-valuenow'), '25');
    assert.equal(await bar().getAttribute('aria-valuemin'), '0');
    assert.equal(await bar().getAttribute('aria-valuemax'), '100');
    assert.equal(await bar().getAttribute('aria-valuetext'), 'Copying everyone’s private files — 25%');
    assert.ok(await page.locator('[data-testid=backup-start]').isDisabled(), 'one backup at a time');

    await send(progress('bk_1', 'finishing', 990, 1000));
    await page.locator('[data-testid=backup-stage]').filter({ hasText: 'Finishing — 99%' }).waitFor();
    assert.equal(await bar().getAttribute('aria-valuenow'), '99');

    server.list = { current: null, backups: [row('bk_1', 'done', { bytes: 1_500_000, people: 3 })], schedule: null };
    await send(progress('bk_1', 'done', 1_500_000, 1_500_000));
    await status('done').waitFor();
    assert.equal(await page.locator('[data-testid=backup-path]').innerText(), '/media/usb/bk_1.skb');
    assert.equal(await bar().count(), 0);
    // Its row is read again, and says so too.
    const done = page.locator('[data-testid=backup-row][data-state=done]');
    await done.waitFor();
    assert.match(await done.innerText(), /From this page\s+Done\s+1\.5 MB\s+3\s+\/media\/usb\/bk_1\.skb/);
    assert.match(await page.getByRole('status').last().innerText(), /The backup is written/);
    assert.ok(await page.locator('[data-testid=backup-start]').isEnabled());
  });

  test('a backup that failed says why, as its record gives it', async () => {
    server.list = { current: progress('bk_2', 'shared', 10, 1000), backups: [row('bk_2', 'running')], schedule: null };
    await show();
    await bar().waitFor();
    server.list = { current: null, backups: [row('bk_2', 'failed', { error: 'there is no space left on /media/usb' })], schedule: null };
    await send(progress('bk_2', 'failed', 0, 0));
    await status('failed').waitFor();
    await page.locator('[data-testid=backup-failed]').filter({ hasText: 'The backup failed: There is no space left on /media/usb.' }).waitFor();
    assert.equal(await page.locator('[data-testid=backup-row-error]').innerText(), 'There is no space left on /media/usb.');
  });

  test('one started here without a word from the socket ends as the list says', async () => {
    await show();
    await page.locator('[data-testid=backup-none]').waitFor();
    // Recorded as running, but nothing reported yet.
    server.onPost = () => {
      server.list = { current: null, backups: [row('bk_new', 'running')], schedule: null };
    };
    await page.locator('#backup-folder').fill(' /media/usb ');
    await page.locator('#backup-passphrase').fill(PASSPHRASE);
    await page.locator('#backup-confirm').fill(PASSPHRASE);
    await page.locator('#backup-models').check();
    await page.locator('[data-testid=backup-start]').click();
    await bar().waitFor();
    assert.deepEqual(server.posted, [{ to: '/media/usb', passphrase: PASSPHRASE, include_models: true }]);
    assert.equal(await bar().getAttribute('aria-valuetext'), 'Copying the data everyone shares — 0%');
    assert.equal(await page.locator('#backup-passphrase').inputValue(), '', 'the passphrase is not kept on the page');
    const focused = await page.evaluate(() => document.querySelector('skald-admin-backups').shadowRoot.activeElement?.id);
    assert.equal(focused, 'backup-outcome', 'focus goes to what tells how it goes');

    const reads = server.reads;
    server.list = { current: null, backups: [row('bk_new', 'done', { bytes: 2048, people: 1 })], schedule: null };
    await status('done').waitFor({ timeout: 10_000 });
    assert.ok(server.reads > reads, 'the list was read again');
    assert.equal(await page.locator('[data-testid=backup-path]').innerText(), '/media/usb/bk_new.skb');
  });

  test('passphrases typed twice differently are not sent', async () => {
    await show();
    await page.locator('[data-testid=backup-none]').waitFor();
    await page.locator('#backup-folder').fill('/media/usb');
    await page.locator('#backup-passphrase').fill(PASSPHRASE);
    await page.locator('#backup-confirm').fill(`${PASSPHRASE}s`);
    assert.equal(await page.locator('#backup-mismatch').innerText(), 'The two passphrases differ.');
    await page.locator('[data-testid=backup-start]').click();
    await page.locator('[data-testid=backup-error]').filter({ hasText: 'The two passphrases differ.' }).waitFor();
    assert.deepEqual(server.posted, []);
    const focused = await page.evaluate(() => document.querySelector('skald-admin-backups').shadowRoot.activeElement?.id);
    assert.equal(focused, 'backup-confirm');
  });

  /** Fills the restore form: a full path, a passphrase and Cy. */
  const fillRestore = async () => {
    await page.locator('#restore-person option[value=u_cy]').waitFor({ state: 'attached' });
    await page.locator('#restore-from').fill(' /media/usb/skald-backup-2026-12-05-0300.skb ');
    await page.locator('#restore-passphrase').fill(PASSPHRASE);
    await page.locator('#restore-person').selectOption('u_cy');
  };

  test('restoring one person: the enrolled offered, what they lose said, their name typed, then it is sent', async () => {
    await show();
    await fillRestore();
    assert.deepEqual(await page.locator('#restore-person option').allInnerTexts(), ['Choose someone', 'Ada', 'Bea', 'Cy'], 'nobody yet to enrol');
    await page.locator('[data-testid=restore-start]').click();
    const dialog = page.locator('skald-confirm dialog');
    await dialog.waitFor();
    const said = await dialog.innerText();
    assert.match(said, /Restore Cy from this backup\?/);
    assert.match(said, /Every window of Cy locks now\./);
    assert.match(said, /anything newer in it is lost/);
    assert.match(said, /password they had then/);
    assert.match(said, /goes back to waiting/);
    const ok = page.locator('[data-testid=confirm-ok]');
    assert.ok(await ok.isDisabled(), 'not before the name is typed');
    assert.deepEqual(server.restores, []);
    await page.locator('[data-testid=confirm-typed]').fill('Cy');
    await ok.click();

    const done = page.locator('[data-testid=restore-done]');
    await done.waitFor();
    assert.deepEqual(server.restores, [{ from: '/media/usb/skald-backup-2026-12-05-0300.skb', passphrase: PASSPHRASE, user: 'u_cy' }]);
    assert.match(await done.innerText(), /^Cy is restored as the backup made on .+ held their space\. They log in with the password they had then\./);
    assert.equal(await page.locator('[data-testid=restore-reset]').innerText(), '1 supervision went back to waiting: it must be accepted again.');
    assert.equal(await page.locator('#restore-passphrase').inputValue(), '', 'the passphrase is not kept on the page');
    const focused = await page.evaluate(() => document.querySelector('skald-admin-backups').shadowRoot.activeElement?.id);
    assert.equal(focused, 'restore-outcome');
  });

  test('cancelled, nothing is sent; refused, the server\'s words are shown and the passphrase is gone', async () => {
    await show();
    await fillRestore();
    await page.locator('[data-testid=restore-start]').click();
    await page.locator('skald-confirm dialog').waitFor();
    await page.keyboard.press('Escape');
    await page.locator('skald-confirm dialog').waitFor({ state: 'hidden' });
    assert.deepEqual(server.restores, []);

    server.restore = () => ({ status: 400, json: { error: { code: 'backup_archive', message: 'the passphrase does not open this backup' } } });
    await page.locator('[data-testid=restore-start]').click();
    await page.locator('[data-testid=confirm-typed]').fill('Cy');
    await page.locator('[data-testid=confirm-ok]').click();
    await page.locator('[data-testid=restore-error]').filter({ hasText: 'The passphrase does not open this backup.' }).waitFor();
    assert.equal(server.restores.length, 1);
    assert.equal(await page.locator('[data-testid=restore-done]').count(), 0);
    assert.equal(await page.locator('#restore-passphrase').inputValue(), '');
    assert.equal(await page.locator('#restore-person').inputValue(), 'u_cy', 'the rest of the form stays');
  });

  test('a path that is not a full one is refused on the page, its field marked', async () => {
    await show();
    await fillRestore();
    await page.locator('#restore-from').fill('skald-backup.skb');
    await page.locator('[data-testid=restore-start]').click();
    await page.locator('[data-testid=restore-error]').filter({ hasText: /^Type the full path of the backup file/ }).waitFor();
    assert.equal(await page.locator('#restore-from').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.locator('skald-confirm dialog[open]').count(), 0);
    assert.deepEqual(server.restores, []);
  });
});
