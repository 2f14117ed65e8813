// End to end, as the people of a new instance would use Skald: setup → add a person (through the
// API; the people pages come later) → that person enrols → a streamed reply → an
// approved note_write card → a long reply stopped → lock → the other person logs in
// and sees none of it. Each step saves a screenshot under web/test-output/, and each
// screen on the way passes axe-core with no violation in the light and the dark theme;
// the console stays free of errors and CSP violations throughout.
//
//   SKALD_BIN=/path/to/skald npm run test:e2e
//
// The scripted model server is taken from SCRIPTED_MODEL_BIN, else from beside SKALD_BIN.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import {
  api,
  axeViolationsInThemes,
  openPage,
  problems,
  screenshot,
  startStack,
  stopStack,
} from './harness.mjs';

const ADA = { name: 'Ada', password: 'otter lantern quietly' };
const BEA = { name: 'Bea', password: 'maple harbour violin' };
const STEP_TIMEOUT = 20_000;

describe('the first people of a new instance walk through Skald', () => {
  let server;
  let model;
  let browser;
  let root;
  /** One page for the whole walk, as one window would be. */
  let session;

  before(async () => {
    ({ root, server, model, browser } = await startStack());
    session = await openPage(browser, `${server.origin}/#token=${server.token}`);
  });

  after(async () => {
    await session?.close();
    await stopStack({ root, server, model, browser });
  });

  const page = () => session.page;
  /** The screen as it is now passes axe-core in both themes. */
  const accessible = async (screen) => assert.deepEqual(await axeViolationsInThemes(session.page), [], `accessibility of ${screen}`);
  /** No console errors, and exactly these error answers since the last check. */
  const noProblems = (step, expectedFailures = []) => {
    assert.deepEqual(problems(session.consoleMessages), [], `console errors by ${step}; server stderr:\n${server.stderr()}`);
    assert.deepEqual(session.failedResponses.splice(0), expectedFailures, `error answers during ${step}`);
  };

  test('1. setup: the administrator, their recovery code, a model connected live', async () => {
    const p = page();
    await p.locator('[data-screen=setup]').waitFor({ timeout: STEP_TIMEOUT });
    assert.ok(!p.url().includes(server.token), 'the launch token left the address bar');
    await p.locator('#name').fill(ADA.name);
    await p.locator('#password').fill('short');
    assert.match(await p.locator('skald-password-hint .text').innerText(), /more characters/);
    await p.locator('#password').fill(ADA.password);
    await p.locator('#confirm').fill(ADA.password);
    await screenshot(p, '01-setup');
    await accessible('setup, filled in');
    await p.getByRole('button', { name: 'Create my account' }).click();

    const code = p.locator('[data-testid=recovery-code]');
    await code.waitFor({ timeout: STEP_TIMEOUT });
    assert.match((await code.innerText()).trim(), /^[A-Z0-9]{4}(-[A-Z0-9]{2,4})+$/);
    const next = p.getByRole('button', { name: 'Continue' });
    assert.equal(await next.isDisabled(), true, 'Continue waits for the confirmation');
    await screenshot(p, '02-recovery-code');
    await accessible('the recovery code');
    await p.getByLabel('I have kept my recovery code somewhere safe.').check();
    await next.click();

    const form = p.locator('[data-testid=provider-form]');
    await form.waitFor({ timeout: STEP_TIMEOUT });
    // A wrong address: the verdict says so, and nothing is saved.
    await form.locator('#name').fill('scripted');
    await form.locator('#base_url').fill('http://127.0.0.1:9/v1');
    await form.getByRole('button', { name: 'Test and connect' }).click();
    await p.locator('[data-testid=verdict][data-ok=false]').waitFor({ timeout: STEP_TIMEOUT });
    await accessible('a model that did not answer');
    await form.locator('#base_url').fill(`${model.url}/v1`);
    await form.getByRole('button', { name: 'Test and connect' }).click();
    const verdict = p.locator('[data-testid=verdict][data-ok=true]');
    await verdict.waitFor({ timeout: STEP_TIMEOUT });
    assert.match(await verdict.innerText(), /3 models/);
    await screenshot(p, '03-model-connected');
    await accessible('a model connected');
    await p.locator('[data-testid=model-step-done]').click();

    await p.locator('[data-screen=workspace]').waitFor({ timeout: STEP_TIMEOUT });
    await p.locator('[data-testid=composer]').waitFor();
    assert.equal(await p.locator('[data-testid=me]').getByText(ADA.name).count(), 1);
    await screenshot(p, '04-administrator-workspace');
    noProblems('setup', ['POST /api/providers 502']);
  });

  test('2. a person is added through the API; the picker shows both', async () => {
    const admin = await api(server.origin, server.token, 'POST', '/api/login', ADA);
    const added = await api(server.origin, admin.token, 'POST', '/api/users', { name: BEA.name, role: 'member' });
    BEA.code = added.enrolment_code;
    await api(server.origin, admin.token, 'POST', '/api/logout');

    const p = page();
    await p.locator('[data-testid=lock]').click();
    await p.locator('[data-screen=picker]').waitFor({ timeout: STEP_TIMEOUT });
    await p.locator('[data-testid=person]').nth(1).waitFor();
    const names = await p.locator('[data-testid=person]').evaluateAll((nodes) => nodes.map((n) => n.dataset.name));
    assert.deepEqual(names.sort(), [ADA.name, BEA.name]);
    await screenshot(p, '05-picker');
    noProblems('the picker');
  });

  test('3. the new person enrols and receives their own recovery code', async () => {
    const p = page();
    await p.locator(`[data-testid=person][data-name=${BEA.name}]`).click();
    const form = p.locator('[data-testid=enrol-form]');
    await form.waitFor();
    assert.equal(await form.locator('#name').inputValue(), BEA.name);
    await form.locator('#code').fill('WRONG-CODE');
    await form.locator('#password').fill(BEA.password);
    await form.locator('#confirm').fill(BEA.password);
    await form.getByRole('button', { name: 'Create my space' }).click();
    await p.locator('[data-testid=enrol-error]').waitFor({ timeout: STEP_TIMEOUT });
    await accessible('enrolment with a wrong code');
    await form.locator('#code').fill(BEA.code);
    await form.locator('#password').fill(BEA.password);
    await form.locator('#confirm').fill(BEA.password);
    await screenshot(p, '06-enrol');
    await form.getByRole('button', { name: 'Create my space' }).click();

    await p.locator('[data-testid=recovery-code]').waitFor({ timeout: STEP_TIMEOUT });
    await screenshot(p, '07-enrol-recovery-code');
    await accessible('the recovery code of an enrolment');
    await p.getByLabel('I have kept my recovery code somewhere safe.').check();
    await p.getByRole('button', { name: 'Continue' }).click();
    await p.locator('[data-screen=workspace]').waitFor({ timeout: STEP_TIMEOUT });
    assert.equal(await p.locator('[data-testid=me]').getByText(BEA.name).count(), 1);
    noProblems('enrolment', ['POST /api/enrol/check 401', 'POST /api/enrol 401']);
  });

  test('4. a streamed reply, rendered as Markdown, with the privacy badge', async () => {
    const p = page();
    const reply = 'Here is a **plan**:\n\n1. Buy flour\n2. Bake\n\n```\nmix(flour, water)\n```\n\nEnjoy the bread and the quiet of a slow morning.';
    await model.push({ text: reply, delay_ms: 40 });
    await p.locator('[data-testid=composer]').fill('How do I bake bread?');
    await p.keyboard.press('Enter');

    const turn = p.locator('[data-testid=turn]').last();
    // Streaming: part of the reply is on screen while the turn still runs.
    await turn.locator('[data-testid=assistant-message] skald-markdown').first().waitFor({ timeout: STEP_TIMEOUT });
    assert.equal(await turn.getAttribute('data-status'), 'running', 'the reply is shown while it streams');
    await screenshot(p, '08-streaming');
    await p.locator('[data-testid=turn][data-status=done]').waitFor({ timeout: STEP_TIMEOUT });
    const message = turn.locator('[data-testid=assistant-message]');
    assert.equal(await message.locator('strong').innerText(), 'plan');
    assert.equal(await message.locator('ol li').count(), 2);
    assert.match(await message.locator('pre code').innerText(), /mix\(flour, water\)/);
    assert.equal(await p.locator('[data-testid=chat-title]').innerText(), 'How do I bake bread?');
    assert.equal(await p.locator('[data-testid=session]').count(), 1);
    // The scripted model is on 127.0.0.1: the words stay on this computer.
    assert.equal(await turn.locator('[data-testid=privacy-badge]').innerText(), 'Private to you');
    await screenshot(p, '09-reply');
    await accessible('a reply with Markdown and a code block');
    noProblems('the streamed reply');
  });

  test('5. a note_write card waits inline and in the inbox; Allow runs it', async () => {
    const p = page();
    await model.push([
      { text: 'I will note that.', tool_calls: [{ name: 'note_write', arguments: { title: 'Shopping', text: 'flour, yeast' } }] },
      { text: 'Saved your shopping list.' },
    ]);
    await p.locator('[data-testid=composer]').fill('Note my shopping list: flour, yeast');
    await p.keyboard.press('Enter');

    const card = p.locator('skald-approval-card').last();
    await card.waitFor({ timeout: STEP_TIMEOUT });
    assert.match(await card.locator('[data-testid=card-sentence]').innerText(), /Save a note titled “Shopping”: flour, yeast/);
    await card.getByText('Exactly what it will send').click();
    const args = JSON.parse(await card.locator('[data-testid=card-arguments]').innerText());
    assert.deepEqual(args, { title: 'Shopping', text: 'flour, yeast' }, 'the exact arguments are shown');
    await p.locator('[data-testid=inbox-count] > [aria-hidden=true]').filter({ hasText: /^1$/ }).waitFor({ timeout: STEP_TIMEOUT });
    assert.equal(await card.locator('[data-testid=always]').count(), 1, 'a member may always allow');
    await screenshot(p, '10-approval-card');
    await accessible('a pending card, its arguments shown');

    // The inbox lists it too.
    await p.locator('[data-testid=nav-inbox]').click();
    await p.locator('[data-testid=inbox-item]').waitFor();
    await screenshot(p, '11-inbox');
    await accessible('the inbox with a card');
    await p.getByRole('button', { name: 'Open the conversation' }).click();

    await p.locator('skald-approval-card [data-testid=allow]').click();
    await p.locator('skald-tool-call[data-status=ok]').waitFor({ timeout: STEP_TIMEOUT });
    await p.locator('[data-testid=turn]').last().and(p.locator('[data-status=done]')).waitFor({ timeout: STEP_TIMEOUT });
    assert.equal(await p.locator('skald-approval-card').count(), 0, 'the decided card is gone');
    assert.equal(await p.locator('[data-testid=inbox-count]').count(), 0, 'nothing waits any more');
    await p.locator('skald-tool-call summary').last().click();
    assert.match(await p.locator('skald-tool-call .result').last().innerText(), /Shopping/);
    await screenshot(p, '12-approved');
    await accessible('a tool result, open');
    noProblems('the approval');
  });

  test('6. Stop ends a long reply at once and keeps what was said', async () => {
    const p = page();
    await model.push({ tokens: 2000, delay_ms: 25 });
    await p.locator('[data-testid=composer]').fill('Count for me, slowly.');
    await p.keyboard.press('Enter');
    const turn = p.locator('[data-testid=turn]').last();
    await turn.locator('skald-markdown').filter({ hasText: 'tok20' }).waitFor({ timeout: STEP_TIMEOUT });
    await screenshot(p, '13-long-reply');
    await p.locator('[data-testid=stop]').click();
    await p.locator('[data-testid=turn][data-status=stopped]').waitFor({ timeout: STEP_TIMEOUT });
    await p.locator('[data-testid=send]').waitFor();
    const kept = await turn.locator('skald-markdown .md').innerText();
    assert.match(kept, /tok20/, 'what was said stays');
    assert.doesNotMatch(kept, /tok1999/, 'the reply did not run to its end');
    await screenshot(p, '14-stopped');
    noProblems('stopping');
  });

  test('7. Lock returns to the picker; the other person logs in and sees none of it', async () => {
    const p = page();
    await p.locator('[data-testid=lock]').click();
    await p.locator('[data-screen=picker]').waitFor({ timeout: STEP_TIMEOUT });
    assert.match(await p.locator('[data-testid=login-notice]').innerText(), /locked/i);
    await screenshot(p, '15-locked');

    await p.locator(`[data-testid=person][data-name=${ADA.name}]`).click();
    const form = p.locator('[data-testid=login-form]');
    await form.locator('#password').fill('not the password');
    await form.getByRole('button', { name: 'Unlock' }).click();
    await p.locator('[data-testid=login-error]').waitFor({ timeout: STEP_TIMEOUT });
    await screenshot(p, '16-wrong-password');
    await form.locator('#password').fill(ADA.password);
    await form.getByRole('button', { name: 'Unlock' }).click();
    await p.locator('[data-screen=workspace]').waitFor({ timeout: STEP_TIMEOUT });
    await p.locator('[data-testid=composer]').waitFor();
    // Give the lists time to load, then check Bea's words are nowhere.
    await p.getByText('No conversations yet.').waitFor({ timeout: STEP_TIMEOUT });
    assert.equal(await p.locator('[data-testid=session]').count(), 0);
    const text = await p.locator('body').innerText();
    for (const secret of ['bread', 'Shopping', 'flour', 'tok20']) {
      assert.ok(!text.includes(secret), `Ada's window shows "${secret}"`);
    }
    await p.locator('[data-testid=nav-inbox]').click();
    await p.locator('[data-testid=inbox-empty]').waitFor({ timeout: STEP_TIMEOUT });
    await screenshot(p, '17-other-person');
    noProblems('the second login', ['POST /api/login 401']);
  });

  test('8. nothing is kept in the browser: no storage, no cookies; a reload returns to the picker', async () => {
    const p = page();
    const stored = await p.evaluate(async () => ({
      local: localStorage.length,
      session: sessionStorage.length,
      cookie: document.cookie,
      databases: (await indexedDB.databases()).length,
    }));
    assert.deepEqual(stored, { local: 0, session: 0, cookie: '', databases: 0 });
    assert.deepEqual(await session.context.cookies(), []);
    noProblems('the end');
  });
});
