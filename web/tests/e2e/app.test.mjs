// The page as the desktop shell drives it (init script, tray "New chat", tray Lock, a
// reload), with the keyboard alone, and in the dark theme.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import {
  api,
  openPage,
  openDisclosure,
  problems,
  screenshot,
  seedInstance,
  startStack,
  stopStack,
  logIn as logInAs,
} from './harness.mjs';

const ADA = { name: 'Ada', password: 'otter lantern quietly' };
const BEA = { name: 'Bea', password: 'maple harbour violin' };
const CY = { name: 'Cy', password: 'copper meadow lantern' };
const TIMEOUT = 20_000;

describe('the page in the desktop window', () => {
  let server;
  let model;
  let browser;
  let root;

  before(async () => {
    ({ root, server, model, browser } = await startStack());
    const { enrolled } = await seedInstance(server, model, ADA, [
      [BEA, 'member'],
      [CY, 'restricted'],
    ]);
    CY.recoveryCode = enrolled[1].recovery_code;
    await api(server.origin, server.token, 'POST', '/api/lock-all');
  });

  after(() => stopStack({ root, server, model, browser }));

  /** The desktop window: the shell's init script hands the token over on every load. */
  const openDesktop = (options = {}) => openPage(browser, `${server.origin}/`, { initScript: initScript(server), ...options });

  const logIn = (page, person) => logInAs(page, person, TIMEOUT);

  test('keyboard alone: pick, unlock, write, send, stop — with focus always visible', async () => {
    const { page, consoleMessages, close } = await openDesktop();
    try {
      await page.locator('[data-testid=person]').first().waitFor({ timeout: TIMEOUT });
      // The first person has the focus; arrow through with Tab.
      assert.equal(await focusedTestId(page), 'person');
      assert.ok(await focusVisible(page), 'the focused person is outlined');
      await page.keyboard.press('Tab');
      assert.equal(await focusedName(page), BEA.name);
      await page.keyboard.press('Enter');
      await page.keyboard.type(BEA.password);
      await page.keyboard.press('Enter');
      await page.locator('[data-screen=workspace]').waitFor({ timeout: TIMEOUT });
      // The message field has the focus after login.
      await page.waitForFunction(() => {
        let element = document.activeElement;
        while (element?.shadowRoot?.activeElement) element = element.shadowRoot.activeElement;
        return element?.getAttribute('data-testid') === 'composer';
      });
      await page.keyboard.type('Hello from the keyboard');
      await page.keyboard.press('Enter');
      await page.locator('[data-testid=turn][data-status=done]').waitFor({ timeout: TIMEOUT });
      assert.match(await page.locator('[data-testid=assistant-message] skald-markdown .md').innerText(), /You said: Hello from the keyboard/);

      // Escape stops a long reply.
      await model.push({ tokens: 2000, delay_ms: 25 });
      await page.keyboard.type('Count slowly');
      await page.keyboard.press('Enter');
      await page.locator('[data-testid=turn]').last().locator('skald-markdown').filter({ hasText: 'tok5' }).waitFor({ timeout: TIMEOUT });
      await page.keyboard.press('Escape');
      await page.locator('[data-testid=turn][data-status=stopped]').waitFor({ timeout: TIMEOUT });

      // Shift+Tab reaches the conversation list; each stop is outlined.
      for (let i = 0; i < 4; i++) {
        await page.keyboard.press('Shift+Tab');
        assert.ok(await focusVisible(page), `focus step ${i} is visible (${await focusedTestId(page)})`);
      }
      await screenshot(page, 'keyboard-focus');
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });

  test('the tray\'s New chat opens a new conversation; its Lock returns to the picker', async () => {
    const { page, consoleMessages, close } = await openDesktop();
    try {
      await logIn(page, BEA);
      await page.locator('[data-testid=session]').first().click();
      await page.locator('[data-testid=turn]').first().waitFor({ timeout: TIMEOUT });
      await page.evaluate(() => window.dispatchEvent(new Event('skald-new-chat')));
      await page.locator('[data-testid=chat-title]').filter({ hasText: 'New chat' }).waitFor({ timeout: TIMEOUT });
      assert.equal(await page.locator('[data-testid=turn]').count(), 0);

      // The tray's Lock locks everyone: the socket closes with 4001.
      await api(server.origin, server.token, 'POST', '/api/lock-all');
      await page.locator('[data-screen=picker]').waitFor({ timeout: TIMEOUT });
      assert.match(await page.locator('[data-testid=login-notice]').innerText(), /locked/i);
      await screenshot(page, 'tray-lock');
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });

  test('a failed reply says why, and Retry tries again without sending the message twice', async () => {
    const { page, consoleMessages, close } = await openDesktop();
    try {
      await logIn(page, ADA);
      await model.push({ status: 401, message: 'invalid api key' });
      await page.locator('[data-testid=composer]').fill('Are you there?');
      await page.keyboard.press('Enter');
      const error = page.locator('[data-testid=turn-error]');
      await error.waitFor({ timeout: TIMEOUT });
      // In words, with the next step for an administrator; the server's reason one click away.
      assert.match(await error.innerText(), /refused the key Skald has for it[\s\S]*Administration → Models/);
      await openDisclosure(error.getByText('What Skald was told'), error.locator('[data-testid=turn-error-detail]'));
      assert.match(await error.innerText(), /refused the API key/);
      await screenshot(page, 'turn-error');
      await page.locator('[data-testid=retry]').click();
      await page.locator('[data-testid=turn]').last().and(page.locator('[data-status=done]')).waitFor({ timeout: TIMEOUT });
      assert.match(await page.locator('[data-testid=turn]').last().locator('skald-markdown .md').innerText(), /You said: Are you there\?/);
      await page.locator('[data-testid=retried]').waitFor();
      assert.equal(await page.locator('[data-testid=retry]').count(), 0, 'the failed turn no longer offers Retry');
      // The retry answered the same message; the history holds it once, also after a reload of it.
      const sessionId = await page.locator('[data-testid=session]').first().getAttribute('data-id');
      const session = await api(server.origin, server.token, 'POST', '/api/login', ADA);
      const rows = await api(server.origin, session.token, 'GET', `/api/sessions/${sessionId}/messages`);
      assert.equal(rows.filter((r) => r.role === 'user').length, 1, 'one user message');
      assert.equal(await page.locator('[data-testid=user-message]').count(), 1);
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });

  test('conversations can be searched, renamed and deleted', async () => {
    const { page, consoleMessages, close } = await openDesktop();
    try {
      await logIn(page, ADA);
      for (const text of ['Plan the garden', 'Recipes for soup']) {
        await page.locator('[data-testid=new-chat]').click();
        await page.locator('[data-testid=composer]').fill(text);
        await page.keyboard.press('Enter');
        await page.locator('[data-testid=session]').filter({ hasText: text }).waitFor({ timeout: TIMEOUT });
        await page.locator('[data-testid=turn][data-status=done]').waitFor({ timeout: TIMEOUT });
      }
      await page.locator('[data-testid=search]').fill('garden');
      assert.deepEqual(await sessionTitles(page), ['Plan the garden']);
      await page.locator('[data-testid=search]').fill('');

      const soup = page.locator('[data-testid=session]').filter({ hasText: 'Recipes for soup' });
      // A row's tools show on hover (or focus), as a pointer finds them.
      await soup.hover();
      await soup.locator('xpath=..').locator('[data-testid=rename]').click();
      await page.keyboard.press('Control+A');
      await page.keyboard.type('Soups for winter');
      await page.keyboard.press('Enter');
      await page.locator('[data-testid=session]').filter({ hasText: 'Soups for winter' }).waitFor({ timeout: TIMEOUT });

      const garden = page.locator('[data-testid=session]').filter({ hasText: 'Plan the garden' });
      await garden.hover();
      await garden.locator('xpath=..').locator('[data-testid=delete]').click();
      await page.locator('[data-testid=confirm-delete]').click();
      await page.locator('[data-testid=session]').filter({ hasText: 'Plan the garden' }).waitFor({ state: 'detached', timeout: TIMEOUT });
      assert.ok((await sessionTitles(page)).includes('Soups for winter'));
      await screenshot(page, 'sessions-managed');
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });

  test('a conversation can be pinned to a model the role allows, and changed between turns', async () => {
    const { page, consoleMessages, close } = await openDesktop();
    try {
      await logIn(page, BEA);
      await page.locator('[data-testid=new-chat]').click();
      const picker = page.locator('[data-testid=model-picker]');
      // The models load after login: the role's three, once they are there.
      await picker.locator('option[value="scripted/scripted-strong"]').waitFor({ state: 'attached', timeout: TIMEOUT });
      const offered = await picker.locator('option').evaluateAll((options) => options.map((o) => o.value));
      assert.deepEqual(offered, ['', 'scripted/scripted-balanced', 'scripted/scripted-fast', 'scripted/scripted-strong']);
      await picker.selectOption('scripted/scripted-fast');
      await page.locator('[data-testid=composer]').fill('Which model are you?');
      await page.keyboard.press('Enter');
      await page.locator('[data-testid=turn][data-status=done]').waitFor({ timeout: TIMEOUT });
      assert.match(await page.locator('.turn-meta').last().innerText(), /scripted\/scripted-fast/);
      // The server says where the next turn goes: this model is on this computer.
      await page.locator('.bar-tools skald-privacy-badge[data-kind=private]').waitFor({ timeout: TIMEOUT });

      // Between turns the pin can change; the next reply comes from the new model.
      assert.equal(await picker.isDisabled(), false, 'the model can change between turns');
      await picker.selectOption('scripted/scripted-strong');
      await page.locator('[data-testid=composer]').fill('And now?');
      await page.keyboard.press('Enter');
      await page.locator('[data-testid=turn]').nth(1).and(page.locator('[data-status=done]')).waitFor({ timeout: TIMEOUT });
      assert.match(await page.locator('.turn-meta').last().innerText(), /scripted\/scripted-strong/);
      const id = await page.locator('[data-testid=session][aria-current=page]').getAttribute('data-id');
      const session = await api(server.origin, server.token, 'POST', '/api/login', BEA);
      assert.equal((await api(server.origin, session.token, 'GET', `/api/sessions/${id}`)).model, 'scripted/scripted-strong');
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });

  test('a clarify question is answered inline with one of its suggestions', async () => {
    const { page, consoleMessages, close } = await openDesktop();
    try {
      await logIn(page, BEA);
      await model.push([
        { tool_calls: [{ name: 'clarify', arguments: { question: 'Which day should I plan for?', suggestions: ['Saturday', 'Sunday'] } }] },
        { text: 'Sunday it is.' },
      ]);
      await page.locator('[data-testid=new-chat]').click();
      await page.locator('[data-testid=composer]').fill('Plan a picnic');
      await page.keyboard.press('Enter');
      const card = page.locator('skald-question-card');
      await card.waitFor({ timeout: TIMEOUT });
      assert.match(await card.locator('.question').innerText(), /Which day should I plan for\?/);
      await page.locator('[data-testid=inbox-count] > [aria-hidden=true]').filter({ hasText: /^1$/ }).waitFor({ timeout: TIMEOUT });
      await screenshot(page, 'question-card');
      await card.locator('[data-testid=suggestion]').filter({ hasText: 'Sunday' }).click();
      await page.locator('[data-testid=turn]').last().and(page.locator('[data-status=done]')).waitFor({ timeout: TIMEOUT });
      assert.equal(await page.locator('skald-question-card').count(), 0);
      assert.match(await page.locator('[data-testid=turn]').last().locator('skald-markdown .md').last().innerText(), /Sunday it is/);
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });

  test('a forgotten password: the recovery code opens the space and is replaced', async () => {
    const { page, consoleMessages, failedResponses, close } = await openDesktop();
    try {
      await page.locator(`[data-testid=person][data-name=${CY.name}]`).click();
      await page.getByRole('button', { name: 'Forgot your password?' }).click();
      const form = page.locator('[data-testid=recover-form]');
      await form.waitFor();
      assert.equal(await form.locator('#name').inputValue(), CY.name);
      await form.locator('#code').fill(CY.recoveryCode);
      await form.locator('#password').fill('willow engine saffron');
      await form.locator('#confirm').fill('willow engine saffron');
      await screenshot(page, 'recover');
      await form.getByRole('button', { name: 'Reset my password' }).click();
      const code = page.locator('[data-testid=recovery-code]');
      await code.waitFor({ timeout: TIMEOUT });
      assert.notEqual((await code.innerText()).trim(), CY.recoveryCode, 'a new code replaces the spent one');
      await page.getByLabel('I have kept my recovery code somewhere safe.').check();
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.locator('[data-screen=workspace]').waitFor({ timeout: TIMEOUT });
      // A restricted role may not approve: the navigation says who is logged in, as what.
      assert.match(await page.locator('[data-testid=me]').innerText(), /Cy\s+Restricted/);
      assert.deepEqual(problems(consoleMessages), []);
      assert.deepEqual(failedResponses, []);
    } finally {
      await close();
    }
  });

  test('a reload forgets the session and returns to the picker', async () => {
    const { page, consoleMessages, close } = await openDesktop();
    try {
      await logIn(page, ADA);
      await page.reload();
      await page.locator('[data-screen=picker]').waitFor({ timeout: TIMEOUT });
      assert.equal(await page.locator('[data-screen=workspace]').count(), 0);
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });

  test('the dark theme follows the OS', async () => {
    const { page, consoleMessages, close } = await openDesktop({ colorScheme: 'dark' });
    try {
      await page.locator('[data-testid=person]').first().waitFor({ timeout: TIMEOUT });
      await screenshot(page, 'dark-picker');
      const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      assert.ok(luminance(background) < 0.2, `a dark background (${background})`);
      await logIn(page, BEA);
      await page.locator('[data-testid=session]').first().click();
      await page.locator('[data-testid=turn]').first().waitFor({ timeout: TIMEOUT });
      await screenshot(page, 'dark-chat');
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });

  test('a narrow window (or 200% zoom) folds the navigation into a menu', async () => {
    const { page, consoleMessages, close } = await openDesktop();
    try {
      await page.setViewportSize({ width: 640, height: 800 });
      await logIn(page, BEA);
      const menu = page.getByRole('button', { name: 'Menu' });
      await menu.waitFor();
      await menu.click();
      await page.locator('[data-testid=session]').first().click();
      await page.locator('[data-testid=turn]').first().waitFor({ timeout: TIMEOUT });
      await screenshot(page, 'narrow-chat');
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });
});

async function sessionTitles(page) {
  return page.locator('[data-testid=session] .row-title').evaluateAll((nodes) => nodes.map((n) => n.textContent.trim()));
}

/** src-tauri/init.js with this server's origin and token filled in, as the shell does. */
function initScript(server) {
  const template = readFileSync(new URL('../../../src-tauri/init.js', import.meta.url), 'utf8');
  return template
    .replaceAll('__SKALD_ORIGIN__', JSON.stringify(server.origin))
    .replaceAll('__SKALD_TOKEN__', JSON.stringify(server.token));
}

/** The deepest focused element, through shadow roots. */
const DEEP_FOCUS = `(() => {
  let element = document.activeElement;
  while (element && element.shadowRoot && element.shadowRoot.activeElement) element = element.shadowRoot.activeElement;
  return element;
})()`;

function focusedTestId(page) {
  return page.evaluate(`${DEEP_FOCUS}?.getAttribute('data-testid') ?? null`);
}

function focusedName(page) {
  return page.evaluate(`${DEEP_FOCUS}?.getAttribute('data-name') ?? null`);
}

/** Whether the focused element draws a focus ring (an outline or a coloured border). */
function focusVisible(page) {
  return page.evaluate(`(() => {
    const element = ${DEEP_FOCUS};
    if (!element || element === document.body) return false;
    const style = getComputedStyle(element);
    return style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0;
  })()`);
}

function luminance(rgb) {
  const [r, g, b] = (rgb.match(/\d+/g) ?? ['255', '255', '255']).map(Number);
  return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
}
