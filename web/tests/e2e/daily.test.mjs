// What a person meets first, done the way they expect: the password meter says what the
// server will say, and setup offers what it found on this computer before anything it
// would download.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { readFile } from 'node:fs/promises';

import { api, axeViolationsInThemes, logIn, openDisclosure, openPage, problems, screenshot, seedInstance, startStack, stopStack } from './harness.mjs';

const ADA = { name: 'Ada', password: 'otter lantern quietly' };
const TIMEOUT = 20_000;

/** The screen as it is now passes axe-core in both themes. */
async function accessible(page, screen) {
  assert.deepEqual(await axeViolationsInThemes(page), [], `accessibility of ${screen}`);
}

describe('setup on a computer that already runs a model server', () => {
  let stack;
  let server;
  let browser;

  before(async () => {
    // The scripted model server stands in for llama.cpp's server on its usual port.
    stack = await startStack({ detected: true });
    ({ server, browser } = stack);
  });

  after(() => stopStack(stack));

  test('offers the server it found first, and the built-in model only as the plain alternative', async () => {
    const { page, consoleMessages, close } = await openPage(browser, `${server.origin}/#token=${server.token}`);
    try {
      await page.locator('[data-screen=setup]').waitFor({ timeout: TIMEOUT });
      await page.locator('#name').fill(ADA.name);
      // The meter and the server agree: a common password is weak on the page too.
      await page.locator('#password').fill('password1234');
      const hint = page.locator('skald-password-hint .text');
      assert.equal(await hint.getAttribute('data-state'), 'weak');
      assert.match(await hint.innerText(), /among the first ones guessed/);
      await page.locator('#password').fill(ADA.password);
      await page.locator('#confirm').fill(ADA.password);
      await page.getByRole('button', { name: 'Create my account' }).click();
      await page.getByLabel('I have kept my recovery code somewhere safe.').check({ timeout: TIMEOUT });
      await page.getByRole('button', { name: 'Continue' }).click();

      const found = page.locator('[data-testid=detected] li');
      await found.first().waitFor({ timeout: TIMEOUT });
      assert.match(await found.first().innerText(), /llama\.cpp/);
      const order = await page.locator('skald-connect-model').evaluate((el) =>
        [...el.shadowRoot.querySelectorAll('[data-testid=detected], [data-testid=provider-form], skald-local-catalogue')].map((e) => e.dataset.testid ?? e.localName),
      );
      assert.deepEqual(order, ['detected', 'provider-form', 'skald-local-catalogue'], 'what was found comes first, the built-in model last');
      // The found server's button is the one that stands out; downloading is offered plainly.
      const connect = found.first().getByRole('button');
      assert.match((await connect.getAttribute('class')) ?? '', /primary/);
      const download = page.locator('[data-testid=local-download]').first();
      await download.waitFor({ timeout: TIMEOUT });
      assert.doesNotMatch((await download.getAttribute('class')) ?? '', /primary/);
      await screenshot(page, 'setup-detected-first');
      await accessible(page, 'setup with a model server found');

      await connect.click();
      await page.locator('[data-testid=verdict][data-ok=true]').waitFor({ timeout: TIMEOUT });
      await page.locator('[data-testid=model-step-done]').click();
      await page.locator('[data-screen=workspace]').waitFor({ timeout: TIMEOUT });

      // The Models page in the same order: the providers in use, adding one, then the built-in model.
      await page.locator('[data-testid=nav-admin]').click();
      await page.locator('[data-testid=admin-tab][data-section=models]').click();
      await page.locator('[data-testid=provider-item]').first().waitFor({ timeout: TIMEOUT });
      const sections = await page.locator('skald-admin-models').evaluate((el) =>
        [...el.shadowRoot.querySelectorAll('.provider-list, skald-connect-model, [data-testid=local-models]')].map((e) => (e.localName === 'ul' ? 'providers' : e.localName === 'skald-connect-model' ? 'connect' : e.dataset.testid)),
      );
      assert.deepEqual(sections, ['providers', 'connect', 'local-models'], 'the built-in model comes after the providers in use');
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });
});

describe('the way in', () => {
  const BEA = { name: 'Bea', password: 'maple harbour violin' };
  let stack;

  before(async () => {
    stack = await startStack();
    await seedInstance(stack.server, stack.model, ADA, [[BEA, 'member']]);
  });

  after(() => stopStack(stack));

  const picker = (page) => page.locator('[data-testid=person]').first().waitFor({ timeout: TIMEOUT });

  test('says how to get back in, and the printed address opens the page again until Skald restarts', async () => {
    const address = `${stack.server.origin}/#token=${stack.server.token}`;
    const { page, consoleMessages, failedResponses, close } = await openPage(stack.browser, address);
    try {
      await picker(page);
      await page.reload();
      const message = page.locator('[data-testid=message]');
      await message.waitFor({ timeout: TIMEOUT });
      assert.match(await message.innerText(), /needs its launch token/);
      assert.match(await page.locator('.ways').innerText(), /Open in Skald’s menu in the system tray[\s\S]*skald serve/);
      await accessible(page, 'the page without its launch token');

      // Not an address; then an address of an earlier start; then the one printed now.
      const field = page.getByLabel('Or paste the address skald serve printed');
      await field.fill('hello');
      await page.keyboard.press('Enter');
      assert.match(await page.locator('[data-testid=launch-error]').innerText(), /not a Skald address/);
      await accessible(page, 'a pasted address that is not one');
      await field.fill(`${stack.server.origin}/#token=from-an-earlier-start`);
      await page.keyboard.press('Enter');
      await page.locator('[data-testid=launch-error]').filter({ hasText: /earlier start of Skald/ }).waitFor({ timeout: TIMEOUT });
      await page.getByLabel('Or paste the address skald serve printed').fill(address);
      await page.keyboard.press('Enter');
      await picker(page);
      assert.equal(await page.evaluate(() => window.location.hash), '', 'the token stays out of the address bar');
      assert.deepEqual(failedResponses, ['GET /api/health 401']);
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
    // The printed address opens another window too: it is good until the server restarts.
    const again = await openPage(stack.browser, address);
    try {
      await picker(again.page);
      assert.equal((await api(stack.server.origin, stack.server.token, 'GET', '/api/health')).status, 'ok');
    } finally {
      await again.close();
    }
  });

  test('after too many wrong passwords it counts down, keeps what was typed, and lets the right one in after', async () => {
    const { page, close } = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
    try {
      await page.locator(`[data-testid=person][data-name=${ADA.name}]`).click();
      const field = page.locator('#password');
      const error = page.locator('[data-testid=login-error]');
      // Five free attempts, then the server asks for a wait.
      for (let i = 0; i < 6; i++) {
        await field.fill(`wrong guess number ${i}`);
        await page.keyboard.press('Enter');
        // Each answer either clears the field (a wrong password) or starts the wait.
        await page.locator('[data-testid=login-wait]').or(error.filter({ hasText: /not right/ })).first().waitFor({ timeout: TIMEOUT });
        await page.waitForFunction(() => {
          const login = document.querySelector('skald-app')?.shadowRoot?.querySelector('skald-login')?.shadowRoot;
          return login?.querySelector('[data-testid=login-wait]') || login?.querySelector('#password')?.value === '';
        });
        if ((await page.locator('[data-testid=login-wait]').count()) > 0) break;
      }
      const wait = page.locator('[data-testid=login-wait]');
      await wait.waitFor({ timeout: TIMEOUT });
      assert.match(await error.innerText(), /Too many wrong passwords/);
      assert.match(await wait.innerText(), /try again in \d+ second/);
      // The right password typed during the wait is kept and not sent; Enter does nothing yet.
      await field.fill(ADA.password);
      assert.equal(await page.locator('button[type=submit]').isDisabled(), true);
      await page.keyboard.press('Enter');
      // When the wait is over the countdown goes, and the same password lets Ada in.
      await wait.waitFor({ state: 'detached', timeout: TIMEOUT });
      assert.equal(await field.inputValue(), ADA.password, 'what was typed is kept');
      await page.keyboard.press('Enter');
      await page.locator('[data-screen=workspace]').waitFor({ timeout: TIMEOUT });
    } finally {
      await close();
    }
  });

  test('the countdown passes the accessibility check while it counts', async () => {
    // Wrong passwords through the API until the wait is 4 s (1 s, 2 s, then 4 s), long
    // enough for axe to read the countdown in both themes.
    const wrong = () =>
      fetch(`${stack.server.origin}/api/login`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${stack.server.token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: BEA.name, password: 'not the password' }),
      });
    for (let i = 0; i < 5; i++) assert.equal((await wrong()).status, 401);
    for (const seconds of [1, 2]) {
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000 + 100));
      assert.equal((await wrong()).status, 401);
    }
    const { page, close } = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
    try {
      await page.locator(`[data-testid=person][data-name=${BEA.name}]`).click();
      await page.locator('#password').fill('still not the password');
      await page.keyboard.press('Enter');
      const wait = page.locator('[data-testid=login-wait]');
      await wait.waitFor({ timeout: TIMEOUT });
      await accessible(page, 'the lockout countdown');
      assert.equal(await wait.count(), 1, 'the countdown was on screen while it was checked');
    } finally {
      await close();
    }
  });
});

describe('what a chat app does with a reply', () => {
  let stack;

  before(async () => {
    stack = await startStack();
    await seedInstance(stack.server, stack.model, ADA);
  });

  after(() => stopStack(stack));

  test('a reply is copied whole, and the conversation is saved as Markdown', async () => {
    const { page, context, consoleMessages, close } = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
    try {
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.server.origin });
      await logIn(page, ADA, TIMEOUT);
      await stack.model.push({ text: 'First line of the plan.\n\n- flour\n- water' });
      await page.locator('[data-testid=composer]').fill('Plan bread');
      await page.keyboard.press('Enter');
      await page.locator('[data-testid=turn][data-status=done]').waitFor({ timeout: TIMEOUT });

      // The clipboard answers a focused page only: this one, not another the browser opened.
      await page.bringToFront();
      await page.locator('[data-testid=copy-reply]').click();
      await page.locator('[data-testid=copy-reply] .copied').waitFor({ timeout: TIMEOUT });
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), 'First line of the plan.\n\n- flour\n- water');

      const [download] = await Promise.all([page.waitForEvent('download'), page.locator('[data-testid=export-conversation]').click()]);
      assert.equal(download.suggestedFilename(), 'Plan-bread.md');
      const text = await readFile(await download.path(), 'utf8');
      assert.match(text, /^# Plan bread\n/);
      assert.match(text, /## You\n\nPlan bread\n\n## Skald \(scripted\/[a-z-]+\)\n\nFirst line of the plan\.\n\n- flour\n- water\n$/);
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });

  test('a conversation is pinned to the top, another archived out of the list and back', async () => {
    const { page, consoleMessages, close } = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
    try {
      await logIn(page, ADA, TIMEOUT);
      for (const text of ['First talk', 'Second talk']) {
        await stack.model.push({ text: 'Noted.' });
        await page.locator('[data-testid=new-chat]').click();
        await page.locator('[data-testid=composer]').fill(text);
        await page.keyboard.press('Enter');
        await page.locator('[data-testid=turn][data-status=done]').waitFor({ timeout: TIMEOUT });
      }
      const row = (title) => page.locator('li.row').filter({ has: page.locator('[data-testid=session]', { hasText: title }) });
      await row('First talk').hover();
      await row('First talk').locator('[data-testid=pin]').click();
      const pinned = page.locator('[data-testid=session-group][data-period=pinned] [data-testid=session]');
      await pinned.filter({ hasText: 'First talk' }).waitFor({ timeout: TIMEOUT });
      assert.equal(await pinned.count(), 1);

      await row('Second talk').hover();
      await row('Second talk').locator('[data-testid=archive]').click();
      await row('Second talk').waitFor({ state: 'detached', timeout: TIMEOUT });
      const show = page.locator('[data-testid=show-archived]');
      assert.equal(await show.innerText(), 'Show archived (1)');
      await show.click();
      await row('Second talk').waitFor({ timeout: TIMEOUT });
      await row('Second talk').hover();
      await row('Second talk').locator('[data-testid=archive]').click();
      await show.waitFor({ state: 'detached', timeout: TIMEOUT });
      await page.reload();
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });

  test("the look is the person's: dark and larger text at once, kept across logins, gone when locked", async () => {
    const { page, consoleMessages, close } = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
    const look = () => page.evaluate(() => [document.documentElement.dataset.theme, getComputedStyle(document.documentElement).fontSize]);
    try {
      await logIn(page, ADA, TIMEOUT);
      assert.deepEqual(await look(), ['light', '16px'], 'as the system is set, at first');
      await page.locator('[data-testid=nav-data]').click();
      await page.locator('[data-testid=theme]').selectOption('dark');
      await page.locator('[data-testid=look-saved]').waitFor({ timeout: TIMEOUT });
      await page.locator('[data-testid=text-size]').selectOption('larger');
      await page.waitForFunction(() => getComputedStyle(document.documentElement).fontSize === '20px', null, { timeout: TIMEOUT }).catch(() => undefined);
      assert.deepEqual(await look(), ['dark', '20px']);
      await screenshot(page, 'my-data-dark-larger');

      await page.locator('[data-testid=lock]').click();
      await page.locator('[data-screen=picker]').waitFor({ timeout: TIMEOUT });
      assert.deepEqual(await look(), ['light', '16px'], 'the next person meets the system look');
      await logIn(page, ADA, TIMEOUT);
      assert.deepEqual(await look(), ['dark', '20px'], "kept in Ada's settings");
      // "As this computer is set" follows the system as it changes.
      await page.locator('[data-testid=nav-data]').click();
      await page.locator('[data-testid=theme]').selectOption('system');
      await page.locator('[data-testid=look-saved]').waitFor({ timeout: TIMEOUT });
      await page.emulateMedia({ colorScheme: 'dark' });
      // The system's change reaches the page as an event: wait for it, then check.
      await page.waitForFunction(() => document.documentElement.dataset.theme === 'dark', null, { timeout: TIMEOUT }).catch(() => undefined);
      assert.equal((await look())[0], 'dark');
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });
});

describe('when something fails or needs someone else', () => {
  const BEA = { name: 'Bea', password: 'maple harbour violin' };
  const CY = { name: 'Cy', password: 'copper meadow lantern' };
  let stack;

  before(async () => {
    stack = await startStack();
    await seedInstance(stack.server, stack.model, ADA, [
      [BEA, 'member'],
      [CY, 'restricted'],
    ]);
  });

  after(() => stopStack(stack));

  const open = () => openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);

  async function ask(page, text) {
    await page.locator('[data-testid=new-chat]').click();
    await page.locator('[data-testid=composer]').fill(text);
    await page.keyboard.press('Enter');
  }

  test('a failed reply says what happened in words and, to a member, whom to ask by name', async () => {
    const { page, close } = await open();
    try {
      await logIn(page, BEA, TIMEOUT);
      await stack.model.push({ status: 401, message: 'invalid api key' });
      await ask(page, 'Hello?');
      const error = page.locator('[data-testid=turn-error]');
      await error.waitFor({ timeout: TIMEOUT });
      assert.equal(await error.locator('[data-testid=turn-error-what]').innerText(), 'The model’s service refused the key Skald has for it.');
      assert.equal(await error.locator('[data-testid=turn-error-next]').innerText(), 'Ask Ada, who manages Skald, to check the model; then try again.');
      assert.equal(await error.locator('[data-testid=turn-error-detail]').isVisible(), false, 'the server’s words wait behind a disclosure');
      await openDisclosure(error.getByText('What Skald was told'), error.locator('[data-testid=turn-error-detail]'));
      assert.match(await error.locator('[data-testid=turn-error-detail]').innerText(), /scripted refused the API key/);
      await accessible(page, 'a failed reply, its detail open');
    } finally {
      await close();
    }
  });

  test('always-allowed tools are listed on My data, and Ask me again takes one back', async () => {
    const { page, close } = await open();
    try {
      await logIn(page, BEA, TIMEOUT);
      await stack.model.push([
        { tool_calls: [{ name: 'note_write', arguments: { title: 'Shopping', text: 'flour' } }] },
        { text: 'Saved.' },
      ]);
      await ask(page, 'Note flour');
      const card = page.locator('skald-approval-card');
      await card.locator('[data-testid=always]').click();
      await card.locator('[data-testid=confirm-ok]').click();
      await page.locator('[data-testid=turn]').last().and(page.locator('[data-status=done]')).waitFor({ timeout: TIMEOUT });

      await page.locator('[data-testid=nav-data]').click();
      const rule = page.locator('[data-testid=my-rule][data-tool=note_write]');
      await rule.waitFor({ timeout: TIMEOUT });
      assert.match(await rule.innerText(), /Write a note/);
      await accessible(page, 'My data with an always-allowed tool');
      await rule.locator('[data-testid=my-rule-revoke]').click();
      await page.locator('[data-testid=my-rules-none]').waitFor({ timeout: TIMEOUT });
      const session = await api(stack.server.origin, stack.server.token, 'POST', '/api/login', BEA);
      assert.deepEqual(await api(stack.server.origin, session.token, 'GET', '/api/me/rules'), []);
    } finally {
      await close();
    }
  });

  test('a call refused because the role may not approve names who may', async () => {
    const { page, close } = await open();
    try {
      await logIn(page, CY, TIMEOUT);
      await stack.model.push([
        { tool_calls: [{ name: 'note_write', arguments: { title: 'Homework', text: 'page 12' } }] },
        { text: 'I could not save it.' },
      ]);
      await ask(page, 'Save my homework');
      const hint = page.locator('[data-testid=ask-approver]');
      await hint.waitFor({ timeout: TIMEOUT });
      assert.match(await hint.innerText(), /Ada or Bea may allow it: ask them in person/);
      await accessible(page, 'a refusal that names who may allow');
    } finally {
      await close();
    }
  });
});
