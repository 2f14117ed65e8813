// Backups from the administrator's page, against the real server: passphrases typed twice
// differently are refused on the page and nothing is sent; a weak one is refused by the
// server, in its words; a good one writes a sealed archive into a folder outside the data
// directory, followed to the end over the live socket, its path shown and found on disk,
// and listed as made from the page. Then daily backups are set, changed with the stored
// passphrase kept, and stopped. Last, Bea changes her password and is restored alone from
// that archive: a wrong passphrase is refused in the server's words, and once her name is
// typed in the confirmation she logs in with the password she had when it was made. The
// page passes axe-core in both themes and fits a 360-px window.
//
//   SKALD_BIN=/path/to/skald npm run test:e2e
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { api, axeViolationsInThemes, logIn, openPage, problems, screenshot, seedInstance, sidewaysOverflow, startStack, stopStack } from './harness.mjs';

const ADA = { name: 'Ada', password: 'otter lantern quietly' };
const BEA = { name: 'Bea', password: 'maple harbour violin' };
const PASSPHRASE = 'granite orchard lighthouse';
const TIMEOUT = 20_000;

describe('backups', () => {
  let stack;
  /** Where the archives go: a folder of its own, outside the data directory. */
  let folder;
  /** The archive the page wrote, which Bea is restored from. */
  let archive = '';

  before(async () => {
    stack = await startStack();
    await seedInstance(stack.server, stack.model, ADA, [[BEA, 'member']]);
    await api(stack.server.origin, stack.server.token, 'POST', '/api/lock-all');
    folder = mkdtempSync(path.join(tmpdir(), 'skald-e2e-backups-'));
  });

  after(async () => {
    await stopStack(stack);
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  test('an administrator backs up from the page, sees where it went, and sets daily backups', async () => {
    const { page, close, consoleMessages, failedResponses } = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
    /** Every `POST /api/backups` the page sent. */
    const posted = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && new URL(request.url()).pathname === '/api/backups') posted.push(request.postDataJSON());
    });
    try {
      await logIn(page, ADA, TIMEOUT);
      await page.locator('[data-testid=nav-admin]').click();
      await page.locator('[data-testid=admin-tab][data-section=backups]').click();
      await page.locator('skald-admin-backups [data-testid=backup-none]').waitFor({ timeout: TIMEOUT });
      await page.getByRole('heading', { name: 'Back up now' }).waitFor();
      assert.equal(await page.locator('[data-testid=admin-tab][data-section=backups]').getAttribute('aria-current'), 'page');
      assert.equal(await page.locator('#backup-passphrase').getAttribute('autocomplete'), 'new-password');
      assert.equal(await page.locator('#backup-confirm').getAttribute('type'), 'password');
      assert.match(await page.locator('skald-admin-backups ul.points').innerText(), /without that passphrase nobody can open it/i);
      await page.locator('[data-testid=schedule-none]').waitFor();

      // Typed twice differently: refused here, nothing sent, the second field marked.
      const start = page.locator('[data-testid=backup-start]');
      const error = page.locator('[data-testid=backup-error]');
      await page.locator('#backup-folder').fill(folder);
      await page.locator('#backup-passphrase').fill(PASSPHRASE);
      await page.locator('#backup-confirm').fill('granite orchard lighthous');
      await start.click();
      await error.filter({ hasText: 'The two passphrases differ.' }).waitFor({ timeout: TIMEOUT });
      assert.equal(await page.locator('#backup-confirm').getAttribute('aria-invalid'), 'true');
      assert.deepEqual(posted, [], 'a mismatched passphrase never leaves the page');

      // Too weak: the server says why, in its words.
      await page.locator('#backup-passphrase').fill('sunshine');
      await page.locator('#backup-confirm').fill('sunshine');
      await start.click();
      await error.filter({ hasText: /^The backup passphrase is too weak\./ }).waitFor({ timeout: TIMEOUT });
      assert.equal(posted.length, 1);
      assert.ok(failedResponses.includes('POST /api/backups 400'), failedResponses.join(', '));
      assert.equal(readdirSync(folder).length, 0, 'nothing was written');

      // A good passphrase: followed to the end, and the archive is where the page says.
      await page.locator('#backup-passphrase').fill(PASSPHRASE);
      await page.locator('#backup-confirm').fill(PASSPHRASE);
      await start.click();
      await page.locator('[data-testid=backup-status][data-stage=done]').waitFor({ timeout: TIMEOUT });
      assert.deepEqual(posted[1], { to: folder, passphrase: PASSPHRASE, include_models: false });
      archive = (await page.locator('[data-testid=backup-path]').innerText()).trim();
      assert.equal(path.dirname(archive), realpathSync(folder));
      assert.ok(existsSync(archive), `${archive} exists`);
      assert.ok(statSync(archive).size > 0, 'the archive is not empty');
      assert.deepEqual(readdirSync(folder), [path.basename(archive)], 'no partial file is left');
      assert.equal(await page.locator('#backup-passphrase').inputValue(), '', 'the passphrase is gone from the page');
      assert.equal(await page.locator('#backup-confirm').inputValue(), '');
      assert.equal(await error.count(), 0);

      // Listed as done, made from the page, with its size and the people in it.
      const row = page.locator(`[data-testid=backup-row][data-state=done]`);
      await row.waitFor({ timeout: TIMEOUT });
      assert.equal(await row.getAttribute('data-kind'), 'manual');
      const text = await row.innerText();
      assert.match(text, /From this page/);
      assert.match(text, /Done/);
      assert.match(text, /\d+(\.\d)? (bytes|KB|MB)/);
      assert.ok(text.includes(archive), 'the row names the archive');

      const found = await axeViolationsInThemes(page, { screenshot: 'backups' });
      await page.setViewportSize({ width: 360, height: 720 });
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => resolve())));
      for (const o of await sidewaysOverflow(page)) found.push(`360 px: ${o}`);
      await screenshot(page, 'backups-narrow');
      await page.setViewportSize({ width: 1280, height: 800 });
      assert.deepEqual(found, [], 'accessibility or layout problems on the Backups page');

      // Daily backups: the first time needs a passphrase.
      await page.locator('#schedule-time').fill('04:15');
      await page.locator('#schedule-keep').fill('3');
      await page.locator('#schedule-folder').fill(folder);
      const save = page.locator('[data-testid=schedule-save]');
      await save.click();
      await page.locator('[data-testid=schedule-error]').filter({ hasText: 'Choose a passphrase.' }).waitFor({ timeout: TIMEOUT });
      await page.locator('#schedule-passphrase').fill(PASSPHRASE);
      await page.locator('#schedule-confirm').fill(PASSPHRASE);
      await save.click();
      const next = page.locator('[data-testid=schedule-next]');
      await next.waitFor({ timeout: TIMEOUT });
      assert.match(await next.innerText(), /^Next backup: .*\d/);
      assert.match(await page.locator('[data-testid=schedule-summary]').innerText(), /Every day at 04:15 .* keeping the newest 3 backups\./);
      assert.equal(await page.locator('#schedule-passphrase').inputValue(), '');
      assert.match(await page.locator('#schedule-passphrase-hint').innerText(), /Leave empty to keep the current one/);

      // Changed without a passphrase: the stored one stays. Read again after leaving the page.
      await page.locator('#schedule-keep').fill('5');
      await save.click();
      await page.locator('[data-testid=schedule-summary]').filter({ hasText: 'keeping the newest 5 backups' }).waitFor({ timeout: TIMEOUT });
      await page.locator('[data-testid=admin-tab][data-section=audit]').click();
      await page.locator('[data-testid=admin-tab][data-section=backups]').click();
      await page.locator('[data-testid=schedule-summary]').filter({ hasText: 'keeping the newest 5 backups' }).waitFor({ timeout: TIMEOUT });
      assert.equal(await page.locator('#schedule-time').inputValue(), '04:15');
      assert.equal(await page.locator('#schedule-keep').inputValue(), '5');

      // Stopped, after a confirmation; the archives written stay.
      await page.locator('[data-testid=schedule-stop]').click();
      await page.locator('[data-testid=confirm-ok]').click();
      await page.locator('[data-testid=schedule-none]').waitFor({ timeout: TIMEOUT });
      assert.equal(await page.locator('[data-testid=schedule-stop]').count(), 0);
      await page.locator('[data-testid=admin-tab][data-section=audit]').click();
      await page.locator('[data-testid=admin-tab][data-section=backups]').click();
      await page.locator('[data-testid=schedule-none]').waitFor({ timeout: TIMEOUT });
      assert.ok(existsSync(archive), 'stopping the schedule leaves the archives');

      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });

  test('an administrator restores one person, who then logs in with the password they had then', async () => {
    assert.ok(archive !== '', 'the archive written by the test before');
    const { origin, token } = stack.server;
    const login = (password) =>
      fetch(`${origin}/api/login`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: BEA.name, password }),
      });
    // Bea changes her password after the backup was made.
    const changed = 'cedar meadow lantern';
    const session = await api(origin, token, 'POST', '/api/login', BEA);
    await api(origin, session.token, 'POST', '/api/me/password', { current_password: BEA.password, new_password: changed });
    assert.equal((await login(BEA.password)).status, 401, 'the old password no longer opens her space');

    const { page, close, consoleMessages, failedResponses } = await openPage(stack.browser, `${origin}/#token=${token}`);
    /** Every `POST /api/backups/restore-person` the page sent. */
    const posted = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && new URL(request.url()).pathname === '/api/backups/restore-person') posted.push(request.postDataJSON());
    });
    try {
      await logIn(page, ADA, TIMEOUT);
      await page.locator('[data-testid=nav-admin]').click();
      await page.locator('[data-testid=admin-tab][data-section=backups]').click();
      await page.getByRole('heading', { name: 'Restore one person from a backup' }).waitFor({ timeout: TIMEOUT });
      await page.locator('#restore-person option', { hasText: BEA.name }).waitFor({ state: 'attached', timeout: TIMEOUT });
      const bea = await page.locator('#restore-person option', { hasText: BEA.name }).getAttribute('value');
      await page.locator('#restore-from').fill(archive);
      await page.locator('#restore-person').selectOption(bea);
      const start = page.locator('[data-testid=restore-start]');
      const confirm = async () => {
        await start.click();
        const dialog = page.locator('skald-admin-backups skald-confirm dialog');
        await dialog.waitFor({ timeout: TIMEOUT });
        assert.match(await dialog.innerText(), /Every window of Bea locks now\. Their space goes back to how it was when the backup was made: anything newer in it is lost\. They log in with the password they had then\./);
        await page.locator('[data-testid=confirm-typed]').fill(BEA.name);
        await page.locator('[data-testid=confirm-ok]').click();
      };

      // A wrong passphrase: refused, in the server's words, and Bea's space is as it was.
      await page.locator('#restore-passphrase').fill('granite orchard lighthous');
      await confirm();
      const error = page.locator('[data-testid=restore-error]');
      await error.waitFor({ timeout: TIMEOUT });
      assert.match(await error.innerText(), /passphrase/i);
      assert.ok(failedResponses.includes('POST /api/backups/restore-person 400'), failedResponses.join(', '));
      assert.equal((await login(changed)).status, 200, 'nothing was restored');

      await page.locator('#restore-passphrase').fill(PASSPHRASE);
      await confirm();
      const done = page.locator('[data-testid=restore-done]');
      await done.waitFor({ timeout: TIMEOUT });
      assert.match(await done.innerText(), /^Bea is restored as the backup made on .+ held their space\. They log in with the password they had then\./);
      assert.deepEqual(posted[1], { from: archive, passphrase: PASSPHRASE, user: bea });
      assert.equal(await page.locator('#restore-passphrase').inputValue(), '', 'the passphrase is gone from the page');
      assert.equal(await error.count(), 0);

      const found = await axeViolationsInThemes(page, { screenshot: 'backups-restored' });
      await page.setViewportSize({ width: 360, height: 720 });
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => resolve())));
      for (const o of await sidewaysOverflow(page)) found.push(`360 px: ${o}`);
      await screenshot(page, 'backups-restored-narrow');
      await page.setViewportSize({ width: 1280, height: 800 });
      assert.deepEqual(found, [], 'accessibility or layout problems on the Backups page after a restore');

      // The password she had when the backup was made opens her space again; the newer one does not.
      assert.equal((await login(BEA.password)).status, 200);
      assert.equal((await login(changed)).status, 401);
      // Ada's own session went on.
      await page.locator('[data-screen=workspace]').waitFor();
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });
});
