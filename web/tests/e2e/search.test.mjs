// Search inside conversations from the sidebar (issue 24): a word that is only in a reply,
// never in a title, finds its conversation, and the hit opens it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { api, axeViolationsInThemes, logIn, openPage, problems, screenshot, seedInstance, startStack, stopStack } from './harness.mjs';

const ADA = { name: 'Ada', password: 'otter lantern quietly' };
const TIMEOUT = 20_000;

/** Starts a conversation through the API with one scripted reply and waits for it to end. */
async function converse(stack, token, text, reply) {
  const { origin } = stack.server;
  const session = await api(origin, token, 'POST', '/api/sessions', {});
  await stack.model.push({ text: reply });
  await api(origin, token, 'POST', `/api/sessions/${session.id}/messages`, { text });
  const deadline = Date.now() + TIMEOUT;
  for (;;) {
    const rows = await api(origin, token, 'GET', `/api/sessions/${session.id}/messages`);
    if (rows.at(-1)?.role === 'assistant' && rows.at(-1).status === 'done') return session.id;
    assert.ok(Date.now() < deadline, `the turn did not end: ${JSON.stringify(rows)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('search inside conversations', () => {
  let stack;
  let bread;

  before(async () => {
    stack = await startStack();
    const { setup } = await seedInstance(stack.server, stack.model, ADA);
    bread = await converse(stack, setup.token, 'Plan bread', 'Knead it, then add cardamom and orange zest.');
    await converse(stack, setup.token, 'Garden chores', 'Water the tomatoes at dusk.');
  });

  after(() => stopStack(stack));

  test('a word only inside a reply finds its conversation, marked, and the hit opens it', async () => {
    const { page, consoleMessages, close } = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
    try {
      await logIn(page, ADA, TIMEOUT);
      await page.locator('[data-testid=session]').first().waitFor({ timeout: TIMEOUT });
      const search = page.locator('[data-testid=search]');
      const hits = page.locator('[data-testid=message-hit]');

      // One character filters titles only: nothing is asked of the server.
      await search.fill('c');
      await page.waitForTimeout(600);
      assert.equal(await hits.count(), 0, 'too short to search inside');

      await search.fill('cardam');
      await hits.first().waitFor({ timeout: TIMEOUT });
      assert.equal(await page.locator('[data-testid=session]').count(), 0, 'no title holds the word');
      assert.equal(await hits.count(), 1);
      assert.equal(await hits.first().getAttribute('data-id'), bread);
      assert.match(await hits.first().innerText(), /Plan bread/);
      assert.equal(await hits.first().locator('mark').innerText(), 'cardamom', 'the match is marked, without the stars');
      assert.doesNotMatch(await hits.first().innerText(), /\*\*/);
      await screenshot(page, 'search-in-conversations');
      assert.deepEqual(await axeViolationsInThemes(page), [], 'accessibility of the search results');

      await hits.first().click();
      await page.locator('[data-testid=turn]').filter({ hasText: 'orange zest' }).waitFor({ timeout: TIMEOUT });
      await search.fill('');
      assert.equal(await page.locator(`[data-testid=session][data-id=${bread}]`).getAttribute('aria-current'), 'page', 'the hit opened its own conversation');
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });
});
