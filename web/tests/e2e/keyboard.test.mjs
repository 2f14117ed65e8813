// Skald with the keyboard alone — Tab, Shift+Tab, Enter, Space and typing — from a fresh
// setup to an allowed card: the focus is never dropped to the page, and what comes next
// is a few Tabs away.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { axeViolationsInThemes, openPage, problems, screenshot, startStack, stopStack } from './harness.mjs';

const ADA = { name: 'Ada', password: 'otter lantern quietly' };
const TIMEOUT = 20_000;
/** The most Tabs anything that comes next may be away. */
const NEAR = 8;

/** The focused element through shadow roots, described for assertions. */
function FOCUSED() {
  let el = document.activeElement;
  while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
  if (!el || el === document.body) return { tag: 'body' };
  const host = el.getRootNode()?.host?.localName ?? null;
  return { tag: el.localName, id: el.id, testid: el.getAttribute('data-testid'), text: (el.innerText ?? el.value ?? '').trim().slice(0, 60), type: el.getAttribute('type'), host };
}

describe('the keyboard alone', () => {
  let stack;
  let model;
  let server;
  let browser;

  before(async () => {
    // The scripted model server stands in for llama.cpp's server on its usual port.
    stack = await startStack({ detected: true });
    ({ model, server, browser } = stack);
  });

  after(() => stopStack(stack));

  test('sets up, logs in, sends and allows a card with Tab, Enter and Space', async () => {
    const { page, consoleMessages, close } = await openPage(browser, `${server.origin}/#token=${server.token}`);
    const focused = () => page.evaluate(FOCUSED);
    /** Waits until the focused element satisfies `wanted` (the page's CSP forbids string functions). */
    const focusComes = async (wanted, what) => {
      const deadline = Date.now() + TIMEOUT;
      while (Date.now() < deadline) {
        if (wanted(await focused())) return;
        await page.waitForTimeout(50);
      }
      assert.fail(`the focus never came to ${what} (at ${JSON.stringify(await focused())})`);
    };
    const notDropped = async (after) => assert.notEqual((await focused()).tag, 'body', `the focus was dropped after ${after}`);
    /** Presses Tab until `wanted` holds for the focused element; fails after NEAR presses. */
    const tabTo = async (wanted, what) => {
      for (let i = 0; i <= NEAR; i++) {
        if (wanted(await focused())) return;
        await page.keyboard.press('Tab');
      }
      assert.fail(`${what} is more than ${NEAR} Tabs away (at ${JSON.stringify(await focused())})`);
    };
    try {
      // Setup: the name field has the focus.
      await page.locator('[data-screen=setup]').waitFor({ timeout: TIMEOUT });
      assert.equal((await focused()).id, 'name');
      await page.keyboard.type(ADA.name);
      await tabTo((f) => f.id === 'password', 'the password field');
      await page.keyboard.type(ADA.password);
      await tabTo((f) => f.id === 'confirm', 'the confirmation field');
      await page.keyboard.type(ADA.password);
      await page.keyboard.press('Enter');

      // The recovery code: the focus is on the new screen, Enter ticks the box as Space does.
      await page.locator('[data-testid=recovery-code]').waitFor({ timeout: TIMEOUT });
      await page.waitForTimeout(200);
      await notDropped('creating the account');
      await tabTo((f) => f.id === 'kept', 'the "I have kept it" box');
      await page.keyboard.press('Enter');
      assert.equal(await page.locator('#kept').isChecked(), true, 'Enter ticks the box');
      await tabTo((f) => f.tag === 'button' && /Continue/.test(f.text), 'Continue');
      await page.keyboard.press('Enter');

      // The model step: connect the server found on this computer.
      const found = page.locator('[data-testid=detected] li button');
      await found.first().waitFor({ timeout: TIMEOUT });
      await tabTo((f) => f.tag === 'button' && /Connect/.test(f.text), 'Connect on the server found');
      await page.keyboard.press('Enter');
      await page.locator('[data-testid=verdict][data-ok=true]').waitFor({ timeout: TIMEOUT });
      await notDropped('connecting a model');
      await tabTo((f) => f.testid === 'model-step-done', 'Continue after connecting');
      await page.keyboard.press('Space');

      // The workspace: the message field has the focus. Send; the card takes the focus.
      await page.locator('[data-screen=workspace]').waitFor({ timeout: TIMEOUT });
      await focusComes((f) => f.testid === 'composer', 'the message field after setup');
      await model.push([
        { text: 'I will note that.', tool_calls: [{ name: 'note_write', arguments: { title: 'Shopping', text: 'flour, yeast' } }] },
        { text: 'Saved.' },
      ]);
      await page.keyboard.type('Note my shopping list: flour, yeast');
      await page.keyboard.press('Enter');
      await page.locator('skald-approval-card').waitFor({ timeout: TIMEOUT });
      await focusComes((f) => f.host === 'skald-approval-card', 'the new card');
      await tabTo((f) => f.testid === 'allow', 'Allow');
      await screenshot(page, 'keyboard-card-allow');
      await page.keyboard.press('Space');
      await page.locator('[data-testid=turn]').last().and(page.locator('[data-status=done]')).waitFor({ timeout: TIMEOUT });
      // The decided card is gone; the focus went back to the message field, not to the page.
      await focusComes((f) => f.testid === 'composer', 'the message field after the card');
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });

  test('logs in by keyboard, and the shortcuts do what their help dialog says', async () => {
    const { page, consoleMessages, close } = await openPage(browser, `${server.origin}/#token=${server.token}`);
    const focused = () => page.evaluate(FOCUSED);
    try {
      // Login by keyboard: the picker's first person has the focus.
      await page.locator('[data-testid=person]').first().waitFor({ timeout: TIMEOUT });
      assert.equal((await focused()).testid, 'person');
      await page.keyboard.press('Enter');
      await page.locator('#password').waitFor({ timeout: TIMEOUT });
      assert.equal((await focused()).id, 'password');
      await page.keyboard.type(ADA.password);
      await page.keyboard.press('Enter');
      await page.locator('[data-screen=workspace]').waitFor({ timeout: TIMEOUT });

      await page.keyboard.press('Control+/');
      const help = page.locator('[data-testid=shortcuts]');
      await help.waitFor({ timeout: TIMEOUT });
      assert.match(await help.innerText(), /Ctrl\s*\+\s*K\s*Search the conversations/);
      await screenshot(page, 'keyboard-shortcuts');
      assert.deepEqual(await axeViolationsInThemes(page), [], 'accessibility of the shortcuts dialog');
      await page.keyboard.press('Escape');
      await help.waitFor({ state: 'hidden', timeout: TIMEOUT });

      await page.keyboard.press('Control+k');
      assert.equal((await focused()).testid, 'search');
      await page.keyboard.press('Shift+Escape');
      assert.equal((await focused()).testid, 'composer');
      await page.keyboard.press('Control+Shift+O');
      await page.locator('[data-testid=chat-title]').filter({ hasText: 'New chat' }).waitFor({ timeout: TIMEOUT });
      assert.equal((await focused()).testid, 'composer');
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });
});
