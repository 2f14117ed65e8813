// Supervision (§6.2) in the browser, against the real server: the administrator, Ada,
// adds Cy with the role Restricted and herself as supervisor; Cy enrols through the
// enrolment screen and reads, before choosing a password, that Ada will be able to open
// the space; Cy writes a note; Ada opens Cy's notes and that note in the supervisor's
// view, read-only, under a banner saying Cy sees it; and Cy's privacy page then says that
// Ada opened the notes and read 1 of them. Then Ada ends the supervision, Cy is told, and
// gives the space a new key: a new session and a new recovery code, the old one refused.
// Each page passes axe-core in both themes and fits a 360-px window.
//
//   SKALD_BIN=/path/to/skald npm run test:e2e
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import {
  api,
  axeViolationsInThemes,
  logIn as logInAs,
  openPage,
  problems,
  screenshot,
  seedInstance,
  sidewaysOverflow,
  startStack,
  stopStack,
} from './harness.mjs';

const ADA = { name: 'Ada', password: 'otter lantern quietly' };
const CY = { name: 'Cy', password: 'maple harbour violin' };
const TIMEOUT = 20_000;
const WIDE = { width: 1280, height: 800 };
const NARROW = { width: 360, height: 720 };

const logIn = (page, person) => logInAs(page, person, TIMEOUT);

/** The page as it is now in both themes and a 360-px window, with screenshots of each. */
async function checkPage(page, name) {
  const found = await axeViolationsInThemes(page, { screenshot: `supervision-${name}` });
  await page.emulateMedia({ colorScheme: 'light', reducedMotion: 'reduce' });
  await page.setViewportSize(NARROW);
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => resolve())));
  for (const o of await sidewaysOverflow(page)) found.push(`360 px: ${o}`);
  await screenshot(page, `supervision-${name}-narrow`);
  await page.setViewportSize(WIDE);
  await page.emulateMedia({ reducedMotion: 'no-preference' });
  assert.deepEqual(found, [], `accessibility or layout problems on ${name}`);
}

/** Locks the page's session from its Lock button and logs `person` in again. */
async function lockAndLogIn(page, person) {
  await page.locator('[data-testid=lock]').click();
  await page.locator('[data-screen=picker]').waitFor({ timeout: TIMEOUT });
  await logIn(page, person);
}

describe('supervision', () => {
  let stack;
  let ada;
  let cy;
  /** Cy's recovery code from the enrolment, which the new key is to retire. */
  let firstCode = '';

  before(async () => {
    stack = await startStack();
    await seedInstance(stack.server, stack.model, ADA);
    await api(stack.server.origin, stack.server.token, 'POST', '/api/lock-all');
    ada = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
  });

  after(async () => {
    await ada?.close();
    await cy?.close();
    await stopStack(stack);
  });

  test('the administrator adds Cy with Ada as supervisor; the edge waits for the enrolment', async () => {
    const p = ada.page;
    await logIn(p, ADA);
    assert.equal(await p.locator('[data-testid=nav-supervised]').count(), 0, 'nobody to look after yet');
    await p.locator('[data-testid=nav-admin]').click();
    await p.locator('skald-admin-people [data-testid=person-row]').first().waitFor({ timeout: TIMEOUT });
    await p.locator('#person-name').fill(CY.name);
    assert.equal(await p.locator('#person-supervisor').count(), 0, 'a Member may not be supervised: no choice offered');
    await p.locator('#person-role').selectOption('restricted');
    const choice = p.locator('#person-supervisor');
    await choice.waitFor();
    assert.deepEqual(await choice.locator('option').allInnerTexts(), ['Nobody', 'Ada']);
    await choice.selectOption({ label: 'Ada' });
    await p.locator('[data-testid=add-person]').click();
    await p.locator('[data-testid=enrolment-code]').waitFor({ timeout: TIMEOUT });
    assert.equal(
      (await p.locator('[data-testid=enrolment-supervisor]').innerText()).trim(),
      'Before choosing a password, Cy is told that Ada will be able to open their space.',
    );
    const code = (await p.locator('[data-testid=enrolment-code]').innerText()).trim();
    CY.code = code;

    await p.locator('[data-testid=admin-tab][data-section=supervision]').click();
    const edge = p.locator('[data-testid=edge-row][data-supervisor=Ada][data-supervised=Cy]');
    await edge.waitFor({ timeout: TIMEOUT });
    assert.equal(await edge.getAttribute('data-state'), 'pending');
    assert.match(await edge.innerText(), /Active once Cy enrols/);
    await checkPage(p, 'admin');

    // The roles say it: Restricted may be supervised, and may not end it alone.
    await p.locator('[data-testid=admin-tab][data-section=roles]').click();
    const restricted = p.locator('[data-testid=role-item][data-id=restricted]');
    await restricted.waitFor({ timeout: TIMEOUT });
    await restricted.locator('[data-testid=role-edit]').click();
    await restricted.locator('[data-testid=role-supervision]').waitFor();
    assert.equal(await restricted.locator('#restricted-may_be_supervised').isChecked(), true);
    assert.equal(await restricted.locator('#restricted-may_end_supervision').isChecked(), false);
    assert.equal(await restricted.locator('#restricted-may_supervise').isChecked(), false);
    assert.match(await restricted.locator('#restricted-may_supervise-hint').innerText(), /sees each time/);
    await restricted.locator('[data-testid=role-edit]').click();
    assert.deepEqual(problems(ada.consoleMessages), []);
  });

  test('Cy enrols, and reads who will be able to open the space before choosing a password', async () => {
    // Opened once Cy exists: the picker lists the people as they are when it opens.
    cy = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
    const p = cy.page;
    await p.locator(`[data-testid=person][data-name=${CY.name}]`).click();
    await p.locator('[data-testid=enrol-form]').waitFor({ timeout: TIMEOUT });
    assert.equal(await p.locator('[data-testid=enrol-supervisors]').count(), 0);
    await p.locator('#code').fill(CY.code);
    // Moving on to the password is when the code is checked.
    await p.locator('#password').click();
    const statement = p.locator('[data-testid=enrol-supervisors]');
    await statement.waitFor({ timeout: TIMEOUT });
    assert.equal(
      (await statement.innerText()).trim(),
      'Ada will be able to open your space (your conversations, notes and memories). You will see each time they do.',
    );
    const before = await p.evaluate(() => {
      const root = document.querySelector('skald-app').shadowRoot.querySelector('skald-login').shadowRoot;
      const said = root.querySelector('[data-testid=enrol-supervisors]');
      const password = root.querySelector('#password');
      return Boolean(said.compareDocumentPosition(password) & Node.DOCUMENT_POSITION_FOLLOWING);
    });
    assert.ok(before, 'the statement comes before the password field');
    await checkPage(p, 'enrol');

    await p.locator('#password').fill(CY.password);
    await p.locator('#confirm').fill(CY.password);
    await p.getByRole('button', { name: 'Create my space' }).click();
    await p.locator('[data-testid=recovery-code]').waitFor({ timeout: TIMEOUT });
    firstCode = (await p.locator('[data-testid=recovery-code]').innerText()).trim();
    await p.getByLabel('I have kept my recovery code somewhere safe.').check();
    await p.getByRole('button', { name: 'Continue' }).click();
    await p.locator('[data-screen=workspace]').waitFor({ timeout: TIMEOUT });

    // A note of Cy's own, written on the Notes page.
    await p.locator('[data-testid=nav-notes]').click();
    await p.locator('[data-testid=new-note]').click();
    await p.locator('#note-title-field').fill('Packing list');
    await p.locator('#note-body-field').fill('Passport, **walking boots** and the blue thermos.');
    await p.locator('[data-testid=note-save]').click();
    await p.locator('[data-testid=note-title]').filter({ hasText: 'Packing list' }).waitFor({ timeout: TIMEOUT });
    assert.deepEqual(problems(cy.consoleMessages), []);
  });

  test('Ada opens Cy’s notes and the note, read-only, under a banner saying Cy sees it', async () => {
    const p = ada.page;
    await lockAndLogIn(p, ADA);
    await p.locator('[data-testid=nav-supervised]').click();
    const person = p.locator('[data-testid=supervised-person][data-name=Cy]');
    await person.waitFor({ timeout: TIMEOUT });
    await person.click();
    const banner = p.locator('[data-testid=supervised-banner]');
    await banner.waitFor({ timeout: TIMEOUT });
    assert.match(await banner.innerText(), /^Cy sees each time you open their space\./);
    assert.match(await p.evaluate(() => window.location.hash), /^#\/supervised\/[0-9a-f]{32}$/, 'the address names the person by id only');
    await checkPage(p, 'view');

    await p.locator('[data-testid=supervised-open][data-area=notes]').click();
    const note = p.locator('[data-testid=supervised-note]');
    await note.first().waitFor({ timeout: TIMEOUT });
    assert.equal(await note.count(), 1);
    await note.click();
    await p.locator('[data-testid=supervised-note-title]').filter({ hasText: 'Packing list' }).waitFor({ timeout: TIMEOUT });
    assert.equal(await p.locator('[data-testid=supervised-note-body] strong').innerText(), 'walking boots', 'the note reads as Markdown');
    assert.equal(await p.locator('skald-supervised textarea, skald-supervised [data-testid=composer], skald-supervised [data-testid=note-edit]').count(), 0, 'nothing to write with');
    assert.equal(await p.locator('[data-testid=supervised-open][data-area=notes]').getAttribute('aria-pressed'), 'true');
    await checkPage(p, 'note');
    assert.deepEqual(problems(ada.consoleMessages), []);
  });

  test('Cy logs in and the privacy page says Ada opened the notes and read 1 of them', async () => {
    const p = cy.page;
    await lockAndLogIn(p, CY);
    await p.locator('[data-testid=nav-privacy]').click();
    const visit = p.locator('[data-testid=access-visit][data-area=notes][data-supervisor=Ada]');
    await visit.waitFor({ timeout: TIMEOUT });
    assert.match((await visit.innerText()).trim(), /^Ada opened your notes at .+ and read 1 of them\.$/);
    assert.equal(await p.locator('[data-testid=access-visit]').count(), 1, 'one visit, one area');
    const keys = await p.locator('[data-testid=privacy-key]').evaluateAll((nodes) => nodes.map((n) => n.dataset.kind));
    assert.deepEqual(keys, ['password', 'recovery', 'supervisor']);
    const edge = p.locator('[data-testid=supervisor-edge][data-supervisor=Ada]');
    assert.match(await edge.innerText(), /Ada can open your space, since/);
    assert.equal(await edge.locator('[data-testid=supervision-end]').count(), 0, 'a Restricted role may not end it alone');
    await edge.locator('[data-testid=supervision-end-refused]').waitFor();
    await checkPage(p, 'privacy');
    assert.deepEqual(problems(cy.consoleMessages), []);
  });

  test('Ada ends it; Cy is told, and gives the space a new key with a new recovery code', async () => {
    const a = ada.page;
    await a.locator('[data-testid=nav-admin]').click();
    await a.locator('[data-testid=admin-tab][data-section=supervision]').click();
    const edge = a.locator('[data-testid=edge-row][data-supervised=Cy]');
    await edge.waitFor({ timeout: TIMEOUT });
    assert.equal(await edge.getAttribute('data-state'), 'active');
    assert.match(await edge.innerText(), /opened 1 time · 1 item read/);
    await edge.locator('[data-testid=edge-remove]').click();
    await a.locator('[data-testid=confirm-ok]').click();
    await a.locator('[data-testid=edges-none]').waitFor({ timeout: TIMEOUT });

    const p = cy.page;
    await p.locator('[data-testid=nav-inbox]').click();
    const notice = p.locator('[data-testid=notice][data-kind=supervision_ended]');
    await notice.waitFor({ timeout: TIMEOUT });
    assert.match(await notice.innerText(), /^Ada can no longer open your space\. You can now give it a new key\.$/m);
    await notice.getByRole('link').click();
    await p.locator('#main[data-page=privacy]').waitFor({ timeout: TIMEOUT });
    await p.locator('[data-testid=supervision-ended]').waitFor({ timeout: TIMEOUT });

    // A wrong password changes nothing.
    await p.locator('#rekey-password').fill('not my password at all');
    await p.locator('[data-testid=rekey-submit]').click();
    await p.locator('[data-testid=rekey-error]').filter({ hasText: 'That is not your current password.' }).waitFor({ timeout: TIMEOUT });

    await p.locator('#rekey-password').fill(CY.password);
    await p.locator('[data-testid=rekey-submit]').click();
    await p.locator('[data-screen=new-key]').waitFor({ timeout: TIMEOUT });
    const code = (await p.locator('[data-testid=recovery-code]').innerText()).trim();
    assert.notEqual(code, firstCode);
    assert.match(await p.locator('[data-testid=recovery-replaced]').innerText(), /old code no longer works/);
    await checkPage(p, 'new-key');
    await p.getByLabel('I have kept my recovery code somewhere safe.').check();
    await p.getByRole('button', { name: 'Continue' }).click();
    // The new session opens where Cy was.
    await p.locator('#main[data-page=privacy]').waitFor({ timeout: TIMEOUT });
    await p.locator('[data-testid=privacy-key]').first().waitFor({ timeout: TIMEOUT });
    const keys = await p.locator('[data-testid=privacy-key]').evaluateAll((nodes) => nodes.map((n) => n.dataset.kind));
    assert.deepEqual(keys, ['password', 'recovery']);

    // The old recovery code opens nothing any more.
    const refused = await fetch(`${stack.server.origin}/api/recover`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${stack.server.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: CY.name, recovery_code: firstCode, new_password: 'cedar meadow lantern' }),
    });
    assert.equal(refused.status, 401);
    assert.deepEqual(problems(cy.consoleMessages), []);
    assert.deepEqual(problems(ada.consoleMessages), []);
  });
});
