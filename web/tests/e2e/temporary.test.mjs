// Temporary chats in the browser: started from beside "New chat" with the keyboard, the
// chat says what it is above the conversation, it never appears in the list of
// conversations, and the page deletes it when the person leaves it — for another
// conversation, and when the page itself goes away. Nothing is recalled into it: a
// memory that matches its message is not given to the model.
//
//   SKALD_BIN=/path/to/skald node --test tests/e2e/temporary.test.mjs
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { api, axeViolationsInThemes, logIn, openPage, problems, seedInstance, startStack, stopStack } from './harness.mjs';

const ADA = { name: 'Ada', password: 'otter lantern quietly' };
const TIMEOUT = 20_000;

/** The status `GET /api/sessions/{id}` answers with `token`. */
async function sessionStatus(origin, token, id) {
  const response = await fetch(`${origin}/api/sessions/${id}`, { headers: { Authorization: `Bearer ${token}` } });
  return response.status;
}

/** Polls until `GET /api/sessions/{id}` answers `status`. */
async function waitForStatus(origin, token, id, status, what) {
  const end = Date.now() + TIMEOUT;
  let last;
  while (Date.now() < end) {
    last = await sessionStatus(origin, token, id);
    if (last === status) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what}: GET /api/sessions/${id} still answers ${last}`);
}

/**
 * Watches a page: the ids every `GET /api/sessions` listed, the temporary conversations
 * `POST /api/sessions` made, and the bearer the page uses (to ask the server as it would).
 */
function watch(page) {
  const seen = { listed: new Set(), temporary: [], bearer: null };
  page.on('request', (request) => {
    const auth = request.headers()['authorization'];
    if (auth && new URL(request.url()).pathname.startsWith('/api/sessions')) seen.bearer = auth.replace(/^Bearer /, '');
  });
  page.on('response', async (response) => {
    const { pathname } = new URL(response.url());
    const method = response.request().method();
    if (pathname !== '/api/sessions' || !response.ok()) return;
    const body = await response.json().catch(() => null);
    if (method === 'GET' && Array.isArray(body)) for (const conversation of body) seen.listed.add(conversation.id);
    if (method === 'POST' && body?.temporary) seen.temporary.push(body.id);
  });
  return seen;
}

describe('temporary chats', () => {
  let stack;
  let token;
  let kept;

  before(async () => {
    stack = await startStack();
    ({ setup: { token } } = await seedInstance(stack.server, stack.model, ADA));
    // A memory the temporary chat's message would recall, were it an ordinary chat.
    await api(stack.server.origin, token, 'POST', '/api/memories', { text: 'Ada drinks green tea every morning.', pool: 'private', subject: { kind: 'self' } });
    // An ordinary conversation to go back to.
    kept = await api(stack.server.origin, token, 'POST', '/api/sessions', {});
    await stack.model.push({ text: 'Noted.' });
    await api(stack.server.origin, token, 'POST', `/api/sessions/${kept.id}/messages`, { text: 'Plan the week' });
    const end = Date.now() + TIMEOUT;
    while ((await api(stack.server.origin, token, 'GET', `/api/sessions/${kept.id}`)).turn_state !== 'done') {
      if (Date.now() > end) throw new Error('the ordinary conversation never finished its turn');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  after(() => stopStack(stack));

  test('started with the keyboard, it says what it is, is never listed, and is deleted when another conversation is opened', async () => {
    const { page, consoleMessages, failedResponses, close } = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
    const seen = watch(page);
    try {
      await logIn(page, ADA, TIMEOUT);
      await page.locator(`[data-testid=session][data-id=${kept.id}]`).waitFor({ timeout: TIMEOUT });

      const start = page.locator('[data-testid=new-temporary-chat]');
      assert.equal((await start.innerText()).trim(), 'Temporary chat');
      await start.focus();
      await page.keyboard.press('Enter');
      const banner = page.locator('[data-testid=temporary-banner]');
      await banner.waitFor({ timeout: TIMEOUT });
      assert.equal(
        (await banner.innerText()).trim(),
        'Temporary chat — nothing is remembered from it or recalled into it, and it is deleted when you leave it.',
      );
      assert.equal(await page.locator('[data-testid=chat-title]').innerText(), 'Temporary chat');

      // The focus went to the message field: the person types at once.
      await stack.model.push({ text: 'Any tea you like.' });
      await page.keyboard.type('Which tea should I make this morning?');
      await page.keyboard.press('Enter');
      await page.locator('[data-testid=turn][data-status=done]').waitFor({ timeout: TIMEOUT });
      assert.equal(seen.temporary.length, 1, 'the first message made one temporary conversation');
      const [temporary] = seen.temporary;
      assert.equal(await sessionStatus(stack.server.origin, token, temporary), 200, 'it exists while the person is in it');
      assert.ok(await banner.isVisible(), 'the banner stays above the conversation');
      assert.equal(await page.locator('[data-testid=used-memories]').count(), 0, 'nothing was recalled into it');
      const [request] = (await stack.model.requests()).slice(-1);
      assert.ok(!JSON.stringify(request.body.messages).includes('green tea every morning'), 'the matching memory was not given to the model');
      assert.deepEqual(await axeViolationsInThemes(page, { screenshot: 'temporary-chat' }), [], 'the temporary chat, in both themes');

      assert.equal(await page.locator(`[data-testid=session][data-id=${temporary}]`).count(), 0, 'not in the list');
      await page.locator(`[data-testid=session][data-id=${kept.id}]`).click();
      await page.locator('[data-testid=user-message]', { hasText: 'Plan the week' }).waitFor({ timeout: TIMEOUT });
      assert.equal(await banner.count(), 0, 'an ordinary conversation has no banner');
      await waitForStatus(stack.server.origin, token, temporary, 404, 'leaving it for another conversation deletes it');

      assert.ok(seen.listed.has(kept.id), 'the list was read');
      assert.ok(!seen.listed.has(temporary), 'no list the page read ever held it');
      assert.equal(await page.locator(`[data-testid=session][data-id=${temporary}]`).count(), 0);
      assert.deepEqual(problems(consoleMessages), []);
      assert.deepEqual(failedResponses, []);
    } finally {
      await close();
    }
  });

  test('a new conversation started from a temporary one deletes it too, and closing the page deletes the next', async () => {
    const { page, consoleMessages, close } = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
    const seen = watch(page);
    try {
      await logIn(page, ADA, TIMEOUT);
      const send = async (text) => {
        await stack.model.push({ text: 'Sure.' });
        await page.locator('[data-testid=composer]').fill(text);
        await page.keyboard.press('Enter');
        await page.locator('[data-testid=turn][data-status=done]').waitFor({ timeout: TIMEOUT });
      };
      await page.locator('[data-testid=new-temporary-chat]').click();
      await send('A passing question');
      const [first] = seen.temporary;
      assert.ok(first, 'a temporary conversation was made');

      await page.locator('[data-testid=new-chat]').click();
      await page.locator('[data-testid=chat-title]', { hasText: 'New chat' }).waitFor({ timeout: TIMEOUT });
      assert.equal(await page.locator('[data-testid=temporary-banner]').count(), 0, 'New chat is an ordinary one');
      await waitForStatus(stack.server.origin, token, first, 404, 'starting a new conversation deletes it');

      await page.locator('[data-testid=new-temporary-chat]').click();
      await send('Another passing question');
      const second = seen.temporary[1];
      assert.ok(second && second !== first);
      assert.equal(await sessionStatus(stack.server.origin, seen.bearer, second), 200);
      assert.deepEqual(problems(consoleMessages), []);

      // The page goes away (closed, reloaded): on its way out it deletes the chat, with
      // the session still open — no lock, no new unlock, did it.
      await page.close({ runBeforeUnload: true });
      await waitForStatus(stack.server.origin, seen.bearer, second, 404, 'closing the page deletes it');
      assert.ok(!seen.listed.has(first) && !seen.listed.has(second), 'neither was ever listed');
    } finally {
      await close();
    }
  });
});
