// The pages beyond the conversation, as the people of an instance use them: the
// administrator's pages (people, roles, models, approval rules, agents, usage, audit);
// a member's privacy page, inbox notices, notes, export and account deletion; the
// refusal a member meets at an administrator's page. Every page passes axe-core with no
// violation at all in the light and the dark theme, fits a 360-px-wide
// window (a 720-px window at 200% zoom), and leaves screenshots under web/test-output/
// (pages-<page>-light.png, pages-<page>-dark.png, pages-<page>-narrow.png).
//
//   SKALD_BIN=/path/to/skald npm run test:e2e
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

import {
  api,
  axeViolationsInThemes,
  openPage,
  problems,
  screenshot,
  seedInstance,
  sidewaysOverflow,
  startStack,
  stopStack,
  logIn as logInAs,
} from './harness.mjs';
import { readZip } from './zip.mjs';

const ADA = { name: 'Ada', password: 'otter lantern quietly' };
const BEA = { name: 'Bea', password: 'maple harbour violin' };
const TIMEOUT = 20_000;
const WIDE = { width: 1280, height: 800 };
const NARROW = { width: 360, height: 720 };

/** Checks the page as it is now in both themes and a narrow window; saves a screenshot of each theme. */
async function checkPage(page, name) {
  const found = await axeViolationsInThemes(page, { screenshot: `pages-${name}` });
  // Reduced motion: the navigation folds into its drawer at once, not mid-slide in the picture.
  await page.emulateMedia({ colorScheme: 'light', reducedMotion: 'reduce' });
  await page.setViewportSize(NARROW);
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => resolve())));
  for (const o of await sidewaysOverflow(page)) found.push(`360 px: ${o}`);
  await screenshot(page, `pages-${name}-narrow`);
  await page.setViewportSize(WIDE);
  await page.emulateMedia({ reducedMotion: 'no-preference' });
  assert.deepEqual(found, [], `accessibility or layout problems on ${name}`);
}

/** Opens a page of the workspace through its address, as a link or Back would. */
async function visit(page, hash) {
  await page.evaluate((h) => {
    window.location.hash = h;
  }, hash);
}

/** The deepest focused element, through shadow roots. */
const DEEP_FOCUS = `(() => {
  let element = document.activeElement;
  while (element && element.shadowRoot && element.shadowRoot.activeElement) element = element.shadowRoot.activeElement;
  return element;
})()`;
const DEEP_FOCUS_TESTID = `${DEEP_FOCUS}?.getAttribute('data-testid') ?? null`;
const FOCUS_OUTLINED = `(() => {
  const style = getComputedStyle(${DEEP_FOCUS});
  return style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0;
})()`;

async function waitUntil(check, what) {
  const end = Date.now() + TIMEOUT;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const logIn = (page, person) => logInAs(page, person, TIMEOUT);

describe('notes, privacy, my data and administration', () => {
  let server;
  let model;
  let browser;
  let root;
  let ada;
  let bea;

  before(async () => {
    ({ root, server, model, browser } = await startStack());
    const { setup, enrolled } = await seedInstance(server, model, ADA, [[BEA, 'member']]);
    ADA.id = setup.user.id;
    BEA.id = enrolled[0].user.id;
    await api(server.origin, server.token, 'POST', '/api/lock-all');
    ada = await openPage(browser, `${server.origin}/#token=${server.token}`);
    bea = await openPage(browser, `${server.origin}/#token=${server.token}`);
  });

  after(async () => {
    await ada?.close();
    await bea?.close();
    await stopStack({ root, server, model, browser });
  });

  test('the login picker and the password form', async () => {
    const p = bea.page;
    await p.locator('[data-testid=person]').nth(1).waitFor({ timeout: TIMEOUT });
    await checkPage(p, 'picker');
    await p.locator(`[data-testid=person][data-name=${BEA.name}]`).click();
    await p.locator('[data-testid=login-form]').waitFor();
    await checkPage(p, 'login');
    await p.locator('#password').fill(BEA.password);
    await p.keyboard.press('Enter');
    await p.locator('[data-screen=workspace]').waitFor({ timeout: TIMEOUT });
    await p.locator('[data-testid=composer]').waitFor();
    await checkPage(p, 'chat');
    assert.deepEqual(problems(bea.consoleMessages), []);
  });

  test('the administrator adds a person, sets a role, orders the rules and tests a provider', async () => {
    const p = ada.page;
    await logIn(p, ADA);
    await p.locator('[data-testid=nav-admin]').click();
    await p.locator('skald-admin-people [data-testid=person-row]').first().waitFor({ timeout: TIMEOUT });

    // People: add Cy, whose enrolment code is shown once; then make Cy restricted.
    await p.locator('#person-name').fill('Cy');
    await p.locator('[data-testid=add-person]').click();
    const code = p.locator('[data-testid=enrolment-code]');
    await code.waitFor({ timeout: TIMEOUT });
    assert.match((await code.innerText()).trim(), /^[A-Z0-9]{4}(-[A-Z0-9]{2,4})+$/);
    const cy = p.locator('[data-testid=person-row][data-name=Cy]');
    await cy.waitFor();
    assert.equal(await cy.getAttribute('data-status'), 'pending');
    await cy.locator('[data-testid=person-role]').selectOption('restricted');
    await cy.locator('[data-testid=person-role-save]').click();
    await cy.locator('.row-title').filter({ hasText: 'Restricted' }).waitFor({ timeout: TIMEOUT });
    await checkPage(p, 'admin-people');

    await p.locator('[data-testid=admin-tab][data-section=roles]').click();
    const member = p.locator('[data-testid=role-item][data-id=member]');
    await member.waitFor({ timeout: TIMEOUT });
    await member.locator('[data-testid=role-edit]').click();
    await member.locator('[data-testid=role-form]').waitFor();
    await checkPage(p, 'admin-roles');
    await member.locator('#member-idle_timeout_minutes').fill('45');
    await member.locator('[data-testid=role-save]').click();
    await member.getByText('locks after 45 min idle').waitFor({ timeout: TIMEOUT });

    // Approval rules: add one, move it up, delete it.
    await p.locator('[data-testid=admin-tab][data-section=rules]').click();
    await p.locator('[data-testid=rule-form]').waitFor({ timeout: TIMEOUT });
    await p.locator('#rule-tool').fill('web_fetch');
    await p.locator('#rule-effect').selectOption('deny');
    await p.locator('#rule-role').selectOption('restricted');
    await p.locator('#rule-priority').fill('100');
    await p.locator('#rule-args-field').fill('/url');
    await p.locator('#rule-args').fill('https://bank.example/*');
    await p.locator('[data-testid=add-rule]').click();
    const denyRow = p.locator('[data-testid=rule-item][data-tool=web_fetch]').filter({ hasText: 'Never' });
    await denyRow.waitFor({ timeout: TIMEOUT });
    assert.match(await denyRow.innerText(), /\/url = https:\/\/bank\.example\/\*/, 'the condition names its field');
    const order = () => p.locator('[data-testid=rule-item]').evaluateAll((rows) => rows.map((r) => r.dataset.id));
    const before = await order();
    const id = await denyRow.getAttribute('data-id');
    await denyRow.locator('[data-testid=rule-up]').click();
    const above = before[before.indexOf(id) - 1];
    await waitUntil(async () => {
      const now = await order();
      return now.indexOf(id) < now.indexOf(above);
    }, 'the rule is weighed before the one that was above it');
    await checkPage(p, 'admin-rules');
    await denyRow.locator('[data-testid=rule-delete]').click();
    await p.locator('[data-testid=confirm-ok]').click();
    await denyRow.waitFor({ state: 'detached', timeout: TIMEOUT });

    // Models: testing the provider reads its models again; that change reaches the others as a notice.
    await p.locator('[data-testid=admin-tab][data-section=models]').click();
    const provider = p.locator('[data-testid=provider-item][data-name=scripted]');
    await provider.waitFor({ timeout: TIMEOUT });
    assert.match(await provider.innerText(), /On this computer/);
    assert.match(await provider.innerText(), /No key is set/);
    await provider.locator('[data-testid=provider-test]').click();
    await provider.locator('[data-testid=provider-verdict]').filter({ hasText: '3 models' }).waitFor({ timeout: TIMEOUT });
    await checkPage(p, 'admin-models');

    for (const [section, loaded] of [
      ['agents', '[data-testid=agent-item]'],
      ['usage', 'skald-admin-usage .block'],
      ['audit', '[data-testid=audit-entry]'],
    ]) {
      await p.locator(`[data-testid=admin-tab][data-section=${section}]`).click();
      await p.locator(loaded).first().waitFor({ timeout: TIMEOUT });
      await checkPage(p, `admin-${section}`);
    }
    assert.ok((await p.locator('[data-testid=audit-entry]').count()) >= 4, 'additions, role and rule changes are on record');
    assert.deepEqual(problems(ada.consoleMessages), []);
  });

  test('a member: the notice of the change, and who can see their words', async () => {
    const p = bea.page;
    // Bea stayed on the conversation while Ada worked: the socket's `notice` event counts it there.
    await p.locator('[data-testid=composer]').waitFor();
    await p.locator('[data-testid=inbox-count] > [aria-hidden=true]').filter({ hasText: /^1$/ }).waitFor({ timeout: TIMEOUT });
    await visit(p, '#/inbox');
    const notice = p.locator('[data-testid=notice][data-kind=provider_changed]');
    await notice.waitFor({ timeout: TIMEOUT });
    assert.match(await notice.innerText(), /^Ada changed the model provider scripted: its models\.$/m);
    await checkPage(p, 'inbox-notice');

    await p.locator('[data-testid=nav-privacy]').click();
    const provider = p.locator('[data-testid=privacy-provider][data-name=scripted]');
    await provider.waitFor({ timeout: TIMEOUT });
    assert.equal((await provider.locator('[data-testid=provider-configured-by]').innerText()).trim(), 'Connected by Ada');
    assert.match(await provider.innerText(), /On this computer/);
    const keys = await p.locator('[data-testid=privacy-key]').evaluateAll((nodes) => nodes.map((n) => n.dataset.kind));
    assert.deepEqual(keys, ['password', 'recovery']);
    await p.locator('[data-testid=no-supervisors]').waitFor();
    const main = p.locator('[data-testid=privacy-agent][data-id=main]');
    await main.locator('[data-testid=agent-prompt-toggle]').click();
    assert.ok((await main.locator('[data-testid=agent-prompt]').innerText()).length > 50, 'the prompt can be read');
    assert.match(await p.locator('[data-testid=privacy-admin-sees]').innerText(), /Member/);
    await checkPage(p, 'privacy');

    // Keyboard alone: from one page link the next is a Tab away, outlined, and Enter opens it.
    await p.locator('[data-testid=nav-inbox]').focus();
    await p.keyboard.press('Tab');
    assert.equal(await p.evaluate(DEEP_FOCUS_TESTID), 'nav-notes');
    assert.ok(await p.evaluate(FOCUS_OUTLINED), 'the focused link is outlined');
    await p.keyboard.press('Enter');
    await p.locator('#main[data-page=notes]').waitFor({ timeout: TIMEOUT });
    // Back returns to the page before.
    await p.goBack();
    await p.locator('#main[data-page=privacy]').waitFor({ timeout: TIMEOUT });

    // Marked as read, the notice leaves the inbox and its count.
    await p.locator('[data-testid=nav-inbox]').click();
    await p.locator('[data-testid=notices-seen]').click();
    await p.locator('[data-testid=inbox-empty]').waitFor({ timeout: TIMEOUT });
    assert.equal(await p.locator('[data-testid=inbox-count]').count(), 0);
    assert.deepEqual(problems(bea.consoleMessages), []);
  });

  test('a member meets a clear refusal at an administrator\'s page, and so do the routes', async () => {
    const p = bea.page;
    assert.equal(await p.locator('[data-testid=nav-admin]').count(), 0, 'no administration in a member\'s navigation');
    await visit(p, '#/admin/people');
    const refusal = p.locator('[data-testid=admin-refused]');
    await refusal.waitFor({ timeout: TIMEOUT });
    assert.match(await refusal.innerText(), /for administrators/);
    assert.match(await refusal.innerText(), /Your role, Member/);
    assert.equal(await p.locator('[data-testid=person-row]').count(), 0);
    await checkPage(p, 'admin-refused');
    // The page asked the server for nothing it would refuse.
    assert.deepEqual(bea.failedResponses, []);

    const session = await api(server.origin, server.token, 'POST', '/api/login', BEA);
    const models = await api(server.origin, session.token, 'GET', '/api/models');
    const providerId = (Array.isArray(models) ? models : models.models)[0].provider_id;
    for (const [method, route, body] of [
      ['GET', '/api/people'],
      ['DELETE', `/api/users/${ADA.id}`, { confirm: ADA.name }],
      ['PATCH', `/api/providers/${providerId}`, { trusted_lan: true }],
      ['PUT', '/api/agents/main', { meta: { name: 'Skald' }, prompt: 'Obey Bea.' }],
      ['GET', '/api/roles'],
      ['GET', '/api/usage'],
      ['GET', '/api/audit'],
      ['GET', '/api/providers'],
      ['GET', '/api/approval-rules'],
      ['POST', '/api/users', { name: 'Eve', role: 'admin' }],
      ['PATCH', `/api/users/${BEA.id}`, { role: 'admin' }],
    ]) {
      const response = await fetch(`${server.origin}${route}`, {
        method,
        headers: { Authorization: `Bearer ${session.token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      assert.equal(response.status, 403, `${method} ${route} refuses a member`);
    }
    await api(server.origin, session.token, 'POST', '/api/logout');
  });

  test('notes: write, find, read, edit and delete', async () => {
    const p = bea.page;
    await p.locator('[data-testid=nav-notes]').click();
    await p.locator('[data-testid=notes-empty]').waitFor({ timeout: TIMEOUT });
    await checkPage(p, 'notes-empty');

    for (const [title, body] of [
      ['Packing list', 'Passport, **walking boots**, rain jacket and the blue thermos.'],
      ['Old idea', 'Something to throw away.'],
    ]) {
      await p.locator('[data-testid=new-note]').click();
      await p.locator('#note-title-field').fill(title);
      await p.locator('#note-body-field').fill(body);
      await p.locator('[data-testid=note-save]').click();
      await p.locator('[data-testid=note-title]').filter({ hasText: title }).waitFor({ timeout: TIMEOUT });
      if (title === 'Packing list') {
        assert.equal(await p.locator('[data-testid=note-body] strong').innerText(), 'walking boots', 'a note reads as Markdown');
      }
    }
    await p.locator('[data-testid=note-item]').nth(1).waitFor({ timeout: TIMEOUT });
    assert.equal(await p.locator('[data-testid=note-item]').count(), 2);

    // Full-text search marks the words it matched.
    await p.locator('[data-testid=notes-search]').fill('thermos');
    await p.locator('[data-testid=note-item] mark').first().waitFor({ timeout: TIMEOUT });
    assert.equal(await p.locator('[data-testid=note-item]').count(), 1);
    await p.locator('[data-testid=note-item]').first().click();
    await p.locator('[data-testid=note-title]').filter({ hasText: 'Packing list' }).waitFor({ timeout: TIMEOUT });
    await p.locator('[data-testid=note-edit]').click();
    await p.locator('#note-body-field').fill('Passport, **walking boots**, rain jacket, the blue thermos and a map.');
    await p.locator('[data-testid=note-save]').click();
    await p.locator('[data-testid=note-body]').filter({ hasText: 'and a map' }).waitFor({ timeout: TIMEOUT });
    await p.locator('[data-testid=notes-search]').fill('');
    await checkPage(p, 'notes');

    await p.locator('[data-testid=note-item]').filter({ hasText: 'Old idea' }).click();
    await p.locator('[data-testid=note-title]').filter({ hasText: 'Old idea' }).waitFor({ timeout: TIMEOUT });
    await p.locator('[data-testid=note-delete]').click();
    await p.locator('[data-testid=confirm-ok]').click();
    await p.locator('[data-testid=note-item]').filter({ hasText: 'Old idea' }).waitFor({ state: 'detached', timeout: TIMEOUT });
    assert.equal(await p.locator('[data-testid=note-item]').count(), 1);
    assert.deepEqual(problems(bea.consoleMessages), []);
  });

  test('export: one archive with the note in it', async () => {
    const p = bea.page;
    await p.locator('[data-testid=nav-data]').click();
    await p.locator('[data-testid=export]').waitFor({ timeout: TIMEOUT });
    await checkPage(p, 'data');
    const [download] = await Promise.all([p.waitForEvent('download', { timeout: TIMEOUT }), p.locator('[data-testid=export]').click()]);
    assert.match(download.suggestedFilename(), /^skald-export-\d{4}-\d{2}-\d{2}\.zip$/);
    const file = path.join(root, 'export.zip');
    await download.saveAs(file);
    await p.locator('[data-testid=export-done]').waitFor({ timeout: TIMEOUT });
    const files = readZip(await readFile(file));
    const notes = [...files.keys()].filter((name) => name.startsWith('notes/'));
    assert.equal(notes.length, 1, `one note in ${[...files.keys()].join(', ')}`);
    assert.match(files.get(notes[0]), /Packing list/);
    assert.match(files.get(notes[0]), /the blue thermos and a map/);
    assert.ok(files.has('skald.json'));
    assert.deepEqual(problems(bea.consoleMessages), []);
  });

  test('deleting the account destroys the file; the person can no longer log in', async () => {
    const p = bea.page;
    const file = path.join(root, 'data', 'database', 'users', `${BEA.id}.db`);
    assert.ok(existsSync(file), `the private file is at ${file}`);
    const button = p.locator('[data-testid=delete-account]');
    await p.locator('#delete-password').fill(BEA.password);
    await p.locator('#delete-confirm').fill('bea');
    assert.equal(await button.isDisabled(), true, 'the exact name is needed');
    await p.locator('#delete-confirm').fill(BEA.name);
    await button.click();
    await p.locator('[data-screen=picker]').waitFor({ timeout: TIMEOUT });
    assert.match(await p.locator('[data-testid=login-notice]').innerText(), /deleted/);
    await p.locator('[data-testid=person]').first().waitFor();
    const names = await p.locator('[data-testid=person]').evaluateAll((nodes) => nodes.map((n) => n.dataset.name));
    assert.ok(!names.includes(BEA.name), `the picker no longer shows ${BEA.name}: ${names}`);
    assert.ok(!existsSync(file), 'the private file is gone');
    const login = await fetch(`${server.origin}/api/login`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${server.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(BEA),
    });
    assert.ok(login.status === 401 || login.status === 404, `login after deletion answers ${login.status}`);
    assert.deepEqual(problems(bea.consoleMessages), []);
  });
});

describe('the first-run screens pass the accessibility check too', () => {
  let server;
  let browser;
  let root;

  before(async () => {
    ({ root, server, browser } = await startStack({ model: false }));
  });

  after(() => stopStack({ root, server, browser }));

  test('setup, the recovery code, connecting a model', async () => {
    const { page, consoleMessages, close } = await openPage(browser, `${server.origin}/#token=${server.token}`);
    try {
      await page.locator('[data-screen=setup]').waitFor({ timeout: TIMEOUT });
      await checkPage(page, 'setup');
      await page.locator('#name').fill(ADA.name);
      await page.locator('#password').fill(ADA.password);
      await page.locator('#confirm').fill(ADA.password);
      await page.getByRole('button', { name: 'Create my account' }).click();
      await page.locator('[data-testid=recovery-code]').waitFor({ timeout: TIMEOUT });
      await checkPage(page, 'recovery-code');
      await page.getByLabel('I have kept my recovery code somewhere safe.').check();
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.locator('[data-testid=provider-form]').waitFor({ timeout: TIMEOUT });
      await page.locator('skald-connect-model .hint').first().waitFor();
      await checkPage(page, 'connect-model');
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });
});
