// What a chat app does with a reply that could be better, done without rewriting history:
// another reply to the same message, a message edited and sent again, both as versions
// to switch between (the model reads only the version shown); and a new conversation
// named by its own model after the first reply, unless the person said not to.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { api, axeViolationsInThemes, logIn, openPage, problems, seedInstance, startStack, stopStack } from './harness.mjs';

const ADA = { name: 'Ada', password: 'otter lantern quietly' };
const TIMEOUT = 20_000;

/** What the person and the model said in the model's last request, system prompt aside. */
async function lastContext(model) {
  const requests = await model.requests();
  return requests.at(-1).body.messages.slice(1).map((m) => m.content);
}

describe('versions of a reply', () => {
  let stack;

  before(async () => {
    stack = await startStack();
    await seedInstance(stack.server, stack.model, ADA);
  });

  after(() => stopStack(stack));

  test('regenerate and edit make versions; the switcher shows each whole and the next message follows the one shown', async () => {
    const { page, consoleMessages, close } = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
    try {
      await logIn(page, ADA, TIMEOUT);
      const turns = page.locator('[data-testid=turn]');
      const reply = (i) => turns.nth(i).locator('[data-testid=assistant-message]');
      await stack.model.push([{ text: 'Hello there.' }, { text: 'Flour, water, salt.' }]);
      for (const [i, text] of ['Hi', 'Plan bread'].entries()) {
        await page.locator('[data-testid=composer]').fill(text);
        await page.keyboard.press('Enter');
        await turns.nth(i).and(page.locator('[data-status=done]')).waitFor({ timeout: TIMEOUT });
      }
      assert.equal(await page.locator('[data-testid=versions]').count(), 0, 'one version, no switcher');

      // Another reply to the same message: it replaces the one shown, which stays a click away.
      await stack.model.push({ text: 'Sourdough, if you have a starter.' });
      await turns.nth(1).locator('[data-testid=regenerate]').click();
      await reply(1).getByText('Sourdough, if you have a starter.').waitFor({ timeout: TIMEOUT });
      await turns.nth(1).and(page.locator('[data-status=done]')).waitFor({ timeout: TIMEOUT });
      assert.deepEqual(await lastContext(stack.model), ['Hi', 'Hello there.', 'Plan bread'], 'the model read the message again, not its old reply');
      const versions = turns.nth(1).locator('[data-testid=versions]');
      await versions.waitFor({ timeout: TIMEOUT });
      assert.equal(await versions.getAttribute('aria-label'), 'Version 2 of 2');
      assert.ok(await versions.locator('[data-testid=version-next]').isDisabled());

      await versions.locator('[data-testid=version-previous]').click();
      await reply(1).getByText('Flour, water, salt.').waitFor({ timeout: TIMEOUT });
      assert.equal(await turns.nth(1).locator('[data-testid=versions]').getAttribute('aria-label'), 'Version 1 of 2');
      const focused = await page.evaluate(() => {
        let el = document.activeElement;
        while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
        return el?.dataset.testid ?? el?.localName;
      });
      assert.equal(focused, 'version-next', 'the focus stays on the switcher, on the way back');
      await page.keyboard.press('Enter');
      await reply(1).getByText('Sourdough, if you have a starter.').waitFor({ timeout: TIMEOUT });

      // The message edited and sent again: a third version, with the new words.
      await turns.nth(1).locator('[data-testid=edit-message]').click();
      const field = page.locator('[data-testid=edit-field]');
      assert.equal(await field.inputValue(), 'Plan bread');
      await field.fill('Plan a cake');
      assert.deepEqual(await axeViolationsInThemes(page, { screenshot: 'versions-edit' }), [], 'the edit field, in both themes');
      await stack.model.push({ text: 'Eggs, sugar, butter.' });
      await page.keyboard.press('Control+Enter');
      await reply(1).getByText('Eggs, sugar, butter.').waitFor({ timeout: TIMEOUT });
      assert.equal(await turns.nth(1).locator('[data-testid=user-message]').innerText(), 'Plan a cake');
      await turns.nth(1).locator('[data-testid=versions][aria-label="Version 3 of 3"]').waitFor({ timeout: TIMEOUT });
      assert.deepEqual(await lastContext(stack.model), ['Hi', 'Hello there.', 'Plan a cake']);

      // The next message continues the version shown, and so does a reload.
      await stack.model.push({ text: 'At 180 degrees.' });
      await page.locator('[data-testid=composer]').fill('How hot?');
      await page.keyboard.press('Enter');
      await turns.nth(2).and(page.locator('[data-status=done]')).waitFor({ timeout: TIMEOUT });
      assert.deepEqual(await lastContext(stack.model), ['Hi', 'Hello there.', 'Plan a cake', 'Eggs, sugar, butter.', 'How hot?']);
      assert.deepEqual(await axeViolationsInThemes(page, { screenshot: 'versions' }), [], 'the switcher, in both themes');
      await turns.nth(1).locator('[data-testid=version-previous]').click();
      await turns.nth(1).locator('[data-testid=versions][aria-label="Version 2 of 3"]').waitFor({ timeout: TIMEOUT });
      assert.equal(await turns.count(), 2, 'the version before had no third turn');
      // Opened again (a new page load, the version shown is the server's).
      await page.goto('about:blank');
      await page.goto(`${stack.server.origin}/#token=${stack.server.token}`);
      await logIn(page, ADA, TIMEOUT);
      await page.locator('[data-testid=session]').first().click();
      await reply(1).getByText('Sourdough, if you have a starter.').waitFor({ timeout: TIMEOUT });
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });
});

describe('automatic titles', () => {
  let stack;
  let token;

  before(async () => {
    stack = await startStack({ env: { SKALD_AUTO_TITLES: 'on' } });
    ({ setup: { token } } = await seedInstance(stack.server, stack.model, ADA));
  });

  after(() => stopStack(stack));

  test("a new conversation is named by its model; a person's title stays; the setting turns it off", async () => {
    const { page, consoleMessages, close } = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
    try {
      await logIn(page, ADA, TIMEOUT);
      await stack.model.push([{ text: 'Knead it for ten minutes.' }, { text: '"Kneading bread dough."' }]);
      await page.locator('[data-testid=composer]').fill('how long do i knead bread dough for a loaf');
      await page.keyboard.press('Enter');
      await page.locator('[data-testid=chat-title]', { hasText: 'Kneading bread dough' }).waitFor({ timeout: TIMEOUT });
      await page.locator('[data-testid=session]', { hasText: 'Kneading bread dough' }).waitFor({ timeout: TIMEOUT });
      const requests = await stack.model.requests();
      assert.match(requests.at(-1).body.messages[1].content, /^Person: how long do i knead/, 'the title request reads the exchange');
      assert.equal(requests.at(-1).body.model, requests.at(-2).body.model, "the conversation's own model named it");

      // A title the person gives is never replaced, even by a later first reply of another version.
      const [session] = await api(stack.server.origin, token, 'GET', '/api/sessions');
      await api(stack.server.origin, token, 'PATCH', `/api/sessions/${session.id}`, { title: 'Bread' });
      await stack.model.push({ text: 'Or use a machine.' });
      await api(stack.server.origin, token, 'POST', `/api/sessions/${session.id}/messages`, { text: 'any shortcut?' });
      const before = (await stack.model.requests()).length;
      await page.locator('[data-testid=turn][data-status=done]').nth(1).waitFor({ timeout: TIMEOUT });
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal((await stack.model.requests()).length, before, 'no title request for a named conversation');

      // Off on My data: the next conversation keeps its first line.
      await page.locator('[data-testid=nav-data]').click();
      await page.locator('[data-testid=auto-titles]').uncheck();
      await page.locator('[data-testid=auto-titles-saved]').waitFor({ timeout: TIMEOUT });
      await page.locator('[data-testid=new-chat]').click();
      await stack.model.push({ text: 'Two cups.' });
      const count = (await stack.model.requests()).length;
      await page.locator('[data-testid=composer]').fill('How much flour?');
      await page.keyboard.press('Enter');
      await page.locator('[data-testid=turn][data-status=done]').waitFor({ timeout: TIMEOUT });
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal((await stack.model.requests()).length, count + 1, 'only the reply was asked for');
      assert.equal(await page.locator('[data-testid=chat-title]').innerText(), 'How much flour?');
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });
});
