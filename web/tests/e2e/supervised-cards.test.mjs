// Cards a supervisor decides (§6.2) in the browser, against the real server and the
// scripted model server: Cy (Restricted, whose role may not approve and sends such calls
// to the supervisor) was made with Ada as supervisor. Cy asks for a note; the model asks
// for note_write; Cy's conversation and inbox show the card waiting for Ada, with no
// Allow. Ada opens "Waiting for you" in the supervisor's view, reads exactly what it will
// run and allows it once; Cy's conversation goes on at once, says Ada allowed it, and the
// note is there. Cy's privacy page then tells that Ada looked at the cards and allowed
// one. Each view passes axe-core in both themes and fits a 360-px window.
//
//   SKALD_BIN=/path/to/skald npm run test:e2e
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { api, axeViolationsInThemes, logIn as logInAs, openPage, problems, screenshot, seedInstance, sidewaysOverflow, startStack, stopStack } from './harness.mjs';

const ADA = { name: 'Ada', password: 'otter lantern quietly' };
const CY = { name: 'Cy', password: 'maple harbour violin' };
const TIMEOUT = 20_000;
const WIDE = { width: 1280, height: 800 };
const NARROW = { width: 360, height: 720 };
const NOTE = { title: 'Homework', text: 'page 12, exercises 3 to 5' };

const logIn = (page, person) => logInAs(page, person, TIMEOUT);

/** The page as it is now in both themes and a 360-px window, with screenshots of each. */
async function checkPage(page, name) {
  const found = await axeViolationsInThemes(page, { screenshot: `supervised-cards-${name}` });
  await page.emulateMedia({ colorScheme: 'light', reducedMotion: 'reduce' });
  await page.setViewportSize(NARROW);
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => resolve())));
  for (const o of await sidewaysOverflow(page)) found.push(`360 px: ${o}`);
  await screenshot(page, `supervised-cards-${name}-narrow`);
  await page.setViewportSize(WIDE);
  await page.emulateMedia({ reducedMotion: 'no-preference' });
  assert.deepEqual(found, [], `accessibility or layout problems on ${name}`);
}

describe('cards a supervisor decides', () => {
  let stack;
  let ada;
  let cy;
  /** Cy's id, as the supervisor's page names the space. */
  let cyId = '';

  before(async () => {
    stack = await startStack();
    const { server } = stack;
    const { setup } = await seedInstance(server, stack.model, ADA);
    // Made with Ada as supervisor: the edge is active from the enrolment on.
    const added = await api(server.origin, setup.token, 'POST', '/api/users', { name: CY.name, role: 'restricted', supervisor: setup.user.id });
    cyId = added.user.id;
    await api(server.origin, server.token, 'POST', '/api/enrol', { name: CY.name, enrolment_code: added.enrolment_code, password: CY.password });
    await api(server.origin, server.token, 'POST', '/api/lock-all');
    ada = await openPage(stack.browser, `${server.origin}/#token=${server.token}`);
    cy = await openPage(stack.browser, `${server.origin}/#token=${server.token}`);
  });

  after(async () => {
    await ada?.close();
    await cy?.close();
    await stopStack(stack);
  });

  test('Restricted sends what it may not approve to the supervisor, as the roles page says', async () => {
    const p = ada.page;
    await logIn(p, ADA);
    await p.locator('[data-testid=nav-admin]').click();
    await p.locator('[data-testid=admin-tab][data-section=roles]').click();
    const restricted = p.locator('[data-testid=role-item][data-id=restricted]');
    await restricted.waitFor({ timeout: TIMEOUT });
    await restricted.locator('[data-testid=role-edit]').click();
    const toggle = restricted.locator('#restricted-cards_to_supervisor');
    await toggle.waitFor();
    assert.equal(await toggle.isChecked(), true);
    assert.equal(await restricted.locator('[data-testid=role-supervision] input[type=checkbox]').count(), 4, 'beside the three supervision toggles');
    assert.match(await restricted.locator('#restricted-cards_to_supervisor-hint').innerText(), /goes to the person’s supervisor instead of being refused/);
    await restricted.locator('[data-testid=role-edit]').click();
    assert.deepEqual(problems(ada.consoleMessages), []);
  });

  test('Cy asks for a note; the card waits for Ada, with no Allow, in the conversation and the inbox', async () => {
    const p = cy.page;
    await logIn(p, CY);
    await stack.model.push([
      { text: 'I will ask to keep that.', tool_calls: [{ name: 'note_write', arguments: NOTE }] },
      { text: 'Your homework is noted.' },
    ]);
    await p.locator('[data-testid=new-chat]').click();
    await p.locator('[data-testid=composer]').fill('Note my homework: page 12, exercises 3 to 5');
    await p.keyboard.press('Enter');

    const card = p.locator('skald-approval-card');
    await card.waitFor({ timeout: TIMEOUT });
    const waiting = card.locator('[data-testid=card-waiting-supervisor]');
    await waiting.waitFor({ timeout: TIMEOUT });
    assert.equal(await waiting.innerText(), 'Waiting for your supervisor (Ada). Only they can allow it; you can still refuse it.');
    assert.equal(await card.locator('[data-testid=allow]').count(), 0, 'Cy may not allow it');
    assert.equal(await card.locator('[data-testid=always]').count(), 0);
    assert.equal(await card.locator('[data-testid=deny]').count(), 1, 'Cy may still refuse it');
    await checkPage(p, 'waiting');

    await p.locator('[data-testid=nav-inbox]').click();
    const item = p.locator('[data-testid=inbox-item]');
    await item.waitFor({ timeout: TIMEOUT });
    assert.match(await item.locator('[data-testid=card-waiting-supervisor]').innerText(), /^Waiting for your supervisor \(Ada\)\./);
    assert.equal(await item.locator('[data-testid=allow]').count(), 0);
    await checkPage(p, 'inbox');
    await p.getByRole('button', { name: 'Open the conversation' }).click();
    await p.locator('skald-approval-card').waitFor({ timeout: TIMEOUT });
    assert.deepEqual(problems(cy.consoleMessages), []);
  });

  test('Ada opens "Waiting for you", reads exactly what it runs, and allows it once', async () => {
    const p = ada.page;
    /** Every decision the page sent. */
    const sent = [];
    p.on('request', (request) => {
      if (request.method() === 'POST' && new URL(request.url()).pathname.startsWith('/api/supervised/')) sent.push(request.postDataJSON());
    });
    await p.locator('[data-testid=nav-supervised]').click();
    await p.locator('[data-testid=supervised-person][data-name=Cy]').click();
    await p.locator('[data-testid=supervised-banner]').waitFor({ timeout: TIMEOUT });
    assert.equal(await p.evaluate(() => window.location.hash), `#/supervised/${cyId}`);

    await p.locator('[data-testid=supervised-open][data-area=cards]').click();
    const item = p.locator('[data-testid=supervised-card]');
    await item.waitFor({ timeout: TIMEOUT });
    assert.equal(await item.count(), 1);
    assert.deepEqual(JSON.parse(await item.locator('[data-testid=card-arguments]').innerText()), NOTE, 'exactly what it will run');
    assert.equal(await item.locator('[data-testid=always]').count(), 0, 'never for good');
    const hash = (await item.locator('skald-approval-card').evaluate((el) => el.card.details.arguments_hash));
    await checkPage(p, 'supervisor');

    await item.locator('[data-testid=allow]').click();
    const decided = item.locator('[data-testid=card-decided]');
    await decided.waitFor({ timeout: TIMEOUT });
    assert.equal(await decided.textContent(), 'Allowed by Ada');
    assert.equal(await item.getAttribute('data-state'), 'allowed');
    assert.deepEqual(sent, [{ allow: true, arguments_hash: hash }]);
    await checkPage(p, 'supervisor-decided');
    assert.deepEqual(problems(ada.consoleMessages), []);
  });

  test('Cy’s conversation goes on at once, says Ada allowed it, and the note is there', async () => {
    const p = cy.page;
    await p.locator('skald-tool-call[data-status=ok]').waitFor({ timeout: TIMEOUT });
    await p.locator('[data-testid=turn]').last().and(p.locator('[data-status=done]')).waitFor({ timeout: TIMEOUT });
    await p.locator('[data-testid=assistant-message]').filter({ hasText: 'Your homework is noted.' }).waitFor({ timeout: TIMEOUT });
    assert.equal(await p.locator('[data-testid=decided-by]').innerText(), 'Allowed by Ada');
    assert.equal(await p.locator('skald-approval-card').count(), 0, 'nothing waits any more');
    assert.equal(await p.locator('[data-testid=inbox-count]').count(), 0);
    await checkPage(p, 'allowed');

    await p.locator('[data-testid=nav-notes]').click();
    await p.locator('[data-testid=note-item]').filter({ hasText: NOTE.title }).waitFor({ timeout: TIMEOUT });

    await p.locator('[data-testid=nav-privacy]').click();
    const looked = p.locator('[data-testid=access-visit][data-area=cards][data-supervisor=Ada]');
    await looked.first().waitFor({ timeout: TIMEOUT });
    const said = (await looked.allInnerTexts()).map((text) => text.trim());
    assert.equal(said.length, 2, said.join(' | '));
    assert.match(said[0], /^Ada allowed a card at .+\.$/);
    assert.match(said[1], /^Ada looked at the cards waiting for them at .+\.$/);
    await checkPage(p, 'privacy');
    assert.deepEqual(problems(cy.consoleMessages), []);
  });
});
