// A conversation's live transcript in Chromium, end to end on the page's side: the real
// conversation view (skald-chat) with a real login (state/login.ts: the API client, the
// live socket of state/live.ts, the inbox), its reply kept by state/transcript.ts. The
// server is played by this file through playwright's routing — its HTTP answers and the
// events it pushes down /api/ws — since only so can a test choose the exact events, lose
// some, repeat one or say `lagged`. tests/unit/ checks the same functions without a page;
// here it is what a person sees as the events arrive, and what the page asks the server.
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { componentFixture, LIVE_SOCKET } from '../../tests/mount.mjs';
import { CHAT_MODULES, chatSession, ME, MODELS, mountChat, NEXT_MODEL, row, TIMEOUT } from '../../tests/fixtures.mjs';

const HASH = '5d41402abc4b2a76b9719d911017c592ae3f1b6c8e0a4d2f7b9c1e3a5d7f9b1c';

const SESSION = chatSession({ title: 'Time' });
const event = (type, seq, extra = {}) => ({ type, session: 'chat_1', turn: 'turn_1', seq, ...extra });

/**
 * The server as the page meets it: the answers it gives (a test changes `history`, `turnState`
 * and `inbox` as the real one would store them), every request the page made, and the live
 * socket down which `push` sends events.
 */
class FakeServer {
  history = [];
  turnState = null;
  inbox = [];
  /** `METHOD /path` and the JSON body, in order. */
  requests = [];
  #socket = null;
  #socketOpened = null;

  /** Answers the context's /api requests and its live socket. */
  async install(context) {
    const opened = new Promise((resolve) => (this.#socketOpened = resolve));
    await context.routeWebSocket(LIVE_SOCKET, (socket) => {
      this.#socket = socket;
      this.#socketOpened();
    });
    this.opened = opened;
  }

  /** For `startBrowser().open({ api })`. */
  api = async (route, request) => {
    const { pathname } = new URL(request.url());
    const method = request.method();
    const body = request.postData() ? JSON.parse(request.postData()) : undefined;
    this.requests.push({ call: `${method} ${pathname}`, ...(body === undefined ? {} : { body }) });
    const json = (status, value) => route.fulfill({ status, contentType: 'application/json', body: JSON.stringify(value) });
    switch (`${method} ${pathname}`) {
      case 'GET /api/me':
        return json(200, ME);
      case 'GET /api/inbox':
        return json(200, this.inbox);
      case 'GET /api/notices':
        return json(200, []);
      case 'GET /api/sessions/chat_1':
        return json(200, { ...SESSION, turn_state: this.turnState, next_model: NEXT_MODEL });
      case 'GET /api/sessions/chat_1/messages':
        return json(200, this.history);
      case 'POST /api/sessions':
        return json(201, { ...SESSION, title: '', temporary: body?.temporary === true });
      case 'POST /api/sessions/chat_1/messages':
        return json(202, { turn: 'turn_1', message: 1 });
      case 'POST /api/sessions/chat_1/stop':
      case 'POST /api/inbox/card_1':
        return route.fulfill({ status: 204, body: '' });
      default:
        return json(404, { error: { code: 'not_found', message: `no ${method} ${pathname} here` } });
    }
  };

  /** Sends live events down the socket, in order. */
  push(...events) {
    for (const e of events) this.#socket.send(JSON.stringify(e));
  }

  /** How often the page has read the conversation's history. */
  historyReads() {
    return this.requests.filter((r) => r.call === 'GET /api/sessions/chat_1/messages').length;
  }
}

describe('a conversation\'s live transcript', () => {
  let server;
  const { page, context } = componentFixture(CHAT_MODULES, () => {
    server = new FakeServer();
    return { api: server.api };
  });
  beforeEach(() => server.install(context));

  /** Logs in as the page does after an unlock and opens conversation chat_1 with its history read. */
  const openConversation = async () => {
    await mountChat(page, { session: SESSION, models: MODELS });
    await server.opened;
    await waitUntil(() => server.historyReads() === 1, 'the history is read');
    await page.locator('[data-testid=composer]').waitFor({ timeout: TIMEOUT });
  };

  /** Mounts a new conversation, not yet sent, as the workspace does for New chat or Temporary chat. */
  const openNew = async (temporary) => {
    await mountChat(page, { session: null, models: MODELS, temporary });
    await server.opened;
    await page.locator('[data-testid=composer]').waitFor({ timeout: TIMEOUT });
  };

  /** Polls a condition of this (Node) side until it holds. */
  const waitUntil = async (condition, what) => {
    const end = Date.now() + TIMEOUT;
    while (!condition()) {
      if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  /** The turns as a person reads them: status, their message, and the reply's parts in order. */
  const turns = () =>
    page.evaluate(() =>
      [...document.querySelector('skald-chat').shadowRoot.querySelectorAll('[data-testid=turn]')].map((turn) => ({
        status: turn.dataset.status,
        said: turn.querySelector('[data-testid=user-message]')?.textContent ?? null,
        reply: [...turn.querySelectorAll('[data-testid=assistant-message] > *')].flatMap((el) => {
          switch (el.tagName) {
            case 'SKALD-MARKDOWN':
              return [el.shadowRoot.textContent.trim()];
            case 'SKALD-TOOL-CALL':
              return [`[${el.shadowRoot.querySelector('.label').textContent}: ${el.dataset.status}]`];
            case 'SKALD-APPROVAL-CARD':
              return ['[approval card]'];
            case 'SKALD-USED-MEMORIES': {
              const line = el.shadowRoot.querySelector('[data-testid=used-memories-summary]');
              return line ? [`[${line.textContent.trim()}]`] : [];
            }
            default:
              return [];
          }
        }),
      })),
    );
  /** Waits until the turns read as `expected`, then returns them. */
  const turnsBecome = async (expected) => {
    const end = Date.now() + TIMEOUT;
    let seen;
    while (Date.now() < end) {
      seen = await turns();
      try {
        assert.deepEqual(seen, expected);
        return seen;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    }
    assert.deepEqual(seen, expected);
  };
  /** Lets the page take in what was pushed, and the chat's 150-ms re-read pass, before counting. */
  const settle = () => page.waitForTimeout(400);

  const composer = () => page.locator('[data-testid=composer]');
  const send = async (text) => {
    await composer().click();
    await page.keyboard.type(text);
    await page.keyboard.press('Enter');
  };

  test('a reply builds up event by event — words, a tool call and its result, the end — without reading the history again', async () => {
    await openConversation();
    await send('what time is it?');
    await turnsBecome([{ status: 'running', said: 'what time is it?', reply: [] }]);
    assert.deepEqual(server.requests.find((r) => r.call === 'POST /api/sessions/chat_1/messages').body, { text: 'what time is it?' });
    assert.ok(await page.locator('[data-testid=stop]').isVisible(), 'Stop while the reply is written');
    assert.ok(await page.locator('[data-testid=model-picker]').isDisabled(), 'the model holds still meanwhile');

    server.push(event('turn_started', 1, { model: 'home/llama' }), event('token', 2, { text: 'Let me ' }), event('token', 3, { text: 'look.' }));
    await turnsBecome([{ status: 'running', said: 'what time is it?', reply: ['Let me look.'] }]);
    server.push(event('tool_call_started', 4, { call: { id: 'call_1', name: 'current_time', arguments: '{}' } }));
    await turnsBecome([{ status: 'running', said: 'what time is it?', reply: ['Let me look.', '[Check the time: running]'] }]);
    server.push(event('tool_call_finished', 5, { call_id: 'call_1', status: 'ok', result: '12:00' }), event('token', 6, { text: 'It is noon.' }));
    await turnsBecome([{ status: 'running', said: 'what time is it?', reply: ['Let me look.', '[Check the time: ok]', 'It is noon.'] }]);
    await settle();
    assert.equal(server.historyReads(), 1, 'events in order need no second read');

    // The server stores the turn as it ends; the page reads it once more and shows the same.
    server.history = [
      row(1, 'turn_1', 'user', 'sent', { text: 'what time is it?' }),
      row(2, 'turn_1', 'assistant', 'tool_calls', { text: 'Let me look.', tool_calls: [{ id: 'call_1', name: 'current_time', arguments: '{}' }], model: 'home/llama' }),
      row(3, 'turn_1', 'tool', 'ok', { text: '12:00', tool_call_id: 'call_1' }),
      row(4, 'turn_1', 'assistant', 'done', { text: 'It is noon.' }),
    ];
    server.turnState = 'done';
    server.push(event('turn_ended', 7, { status: 'done', error: null }));
    await turnsBecome([{ status: 'done', said: 'what time is it?', reply: ['Let me look.', '[Check the time: ok]', 'It is noon.'] }]);
    await waitUntil(() => server.historyReads() === 2, 'the ended turn is read back');
    assert.ok(await page.locator('[data-testid=send]').isVisible(), 'Send is back');
    assert.ok(await page.locator('[data-testid=model-picker]').isEnabled());
  });

  test('Stop asks the server once, and the turn shows it stopped', async () => {
    await openConversation();
    await send('write me a long story');
    server.push(event('turn_started', 1), event('token', 2, { text: 'Once upon a time' }));
    await turnsBecome([{ status: 'running', said: 'write me a long story', reply: ['Once upon a time'] }]);
    await page.locator('[data-testid=stop]').click();
    await page.locator('[data-testid=stop]').click();
    await waitUntil(() => server.requests.some((r) => r.call === 'POST /api/sessions/chat_1/stop'), 'Stop reaches the server');
    await settle();
    assert.equal(server.requests.filter((r) => r.call === 'POST /api/sessions/chat_1/stop').length, 1, 'a second click while stopping asks nothing more');
    server.push(event('turn_ended', 3, { status: 'stopped', error: null }));
    await turnsBecome([{ status: 'stopped', said: 'write me a long story', reply: ['Once upon a time'] }]);
    assert.equal(await page.locator('[data-testid=turn-stopped]').textContent(), 'Stopped.');
    assert.ok(await page.locator('[data-testid=send]').isVisible());
  });

  test('`lagged` makes the page read the history again, and the stored turn replaces what was missed', async () => {
    await openConversation();
    await send('say hello');
    server.push(event('turn_started', 1), event('token', 2, { text: 'Hel' }));
    await turnsBecome([{ status: 'running', said: 'say hello', reply: ['Hel'] }]);

    // The socket fell behind: events 3 and 4 are lost. The page reads the history again;
    // a running turn's words are stored only at its end, so what streamed stays.
    server.turnState = 'running';
    server.history = [row(1, 'turn_1', 'user', 'sent', { text: 'say hello' })];
    server.push({ type: 'lagged' });
    await waitUntil(() => server.historyReads() === 2, 'the history is read again after `lagged`');
    await turnsBecome([{ status: 'running', said: 'say hello', reply: ['Hel'] }]);

    // The next event shows the gap in seq: one more read.
    server.push(event('token', 5, { text: ' world.' }));
    await waitUntil(() => server.historyReads() === 3, 'a gap in seq reads the history again');

    server.history = [row(1, 'turn_1', 'user', 'sent', { text: 'say hello' }), row(2, 'turn_1', 'assistant', 'done', { text: 'Hello, world.' })];
    server.turnState = 'done';
    server.push(event('turn_ended', 6, { status: 'done', error: null }));
    await turnsBecome([{ status: 'done', said: 'say hello', reply: ['Hello, world.'] }]);
  });

  test('a repeated event adds nothing twice, and one from before the last is taken as a sign to read again', async () => {
    await openConversation();
    await send('run it');
    const started = event('tool_call_started', 2, { call: { id: 'call_1', name: 'current_time', arguments: '{}' } });
    server.push(event('turn_started', 1), started);
    await turnsBecome([{ status: 'running', said: 'run it', reply: ['[Check the time: running]'] }]);
    await settle();
    const reads = server.historyReads();

    server.push(started);
    await waitUntil(() => server.historyReads() === reads + 1, 'a seq seen before reads the history again');
    assert.deepEqual(await turns(), [{ status: 'running', said: 'run it', reply: ['[Check the time: running]'] }], 'one call, once');

    server.push(event('tool_call_finished', 3, { call_id: 'call_1', status: 'ok', result: '12:00' }), event('tool_call_finished', 3, { call_id: 'call_1', status: 'ok', result: '12:00' }));
    await turnsBecome([{ status: 'running', said: 'run it', reply: ['[Check the time: ok]'] }]);
  });

  test('events of another conversation change nothing; a turn it never saw start is read from the history', async () => {
    await openConversation();
    server.push({ ...event('turn_started', 1), session: 'chat_2' }, { ...event('token', 2, { text: 'not yours' }), session: 'chat_2' });
    await settle();
    assert.deepEqual(await turns(), []);
    assert.equal(server.historyReads(), 1);

    // Another window of the same person sent a message; this one joins in the middle.
    server.history = [row(1, 'turn_9', 'user', 'sent', { text: 'from the other window' })];
    server.turnState = 'running';
    server.push({ ...event('token', 4, { text: 'half' }), turn: 'turn_9' });
    await waitUntil(() => server.historyReads() === 2, 'the unknown turn is read');
    await turnsBecome([{ status: 'running', said: 'from the other window', reply: [] }]);
  });

  test('an approval card shows under its call; Allow sends the decision bound to the arguments shown', async () => {
    await openConversation();
    await send('note the shopping');
    const args = '{"title":"Shopping","body":"eggs"}';
    const card = {
      id: 'card_1',
      kind: 'approval',
      state: 'pending',
      summary: 'Write the note "Shopping"',
      session_id: 'chat_1',
      created_at: '2026-01-01T00:00:00Z',
      details: { tool: 'note_write', arguments: args, arguments_hash: HASH, call_id: 'call_1', turn_id: 'turn_1' },
    };
    server.push(
      event('turn_started', 1),
      event('tool_call_started', 2, { call: { id: 'call_1', name: 'note_write', arguments: args } }),
      event('card', 3, { card }),
      event('turn_parked', 4),
    );
    await turnsBecome([{ status: 'parked', said: 'note the shopping', reply: ['[Write a note: waiting]', '[approval card]'] }]);
    assert.ok(await page.locator('[data-testid=send]').isVisible(), 'a parked turn leaves the composer free');

    await page.locator('[data-testid=allow]').click();
    await turnsBecome([{ status: 'parked', said: 'note the shopping', reply: ['[Write a note: running]'] }]);
    assert.deepEqual(server.requests.filter((r) => r.call === 'POST /api/inbox/card_1').map((r) => r.body), [{ decision: 'allow', arguments_hash: HASH }]);
  });
  test('what a turn recalled is one line under the reply — each memory once — and no row per recall', async () => {
    const recall = (id, query) => ({ id, name: 'recall', arguments: JSON.stringify({ query }) });
    server.history = [
      row(1, 'turn_0', 'user', 'sent', { text: 'which tea this morning?' }),
      // The server's own recall, right after the message; then the model recalls again.
      row(2, 'turn_0', 'assistant', 'tool_calls', { tool_calls: [recall('call_auto', 'which tea this morning?')] }),
      row(3, 'turn_0', 'tool', 'ok', { text: 'mem_tea (private): Ada drinks green tea.\nmem_pot (shared): The teapot is blue.', tool_call_id: 'call_auto', tool_name: 'recall' }),
      row(4, 'turn_0', 'assistant', 'tool_calls', { text: 'Let me check one more thing.', tool_calls: [recall('call_model', 'kettle')], model: 'home/llama' }),
      row(5, 'turn_0', 'tool', 'ok', { text: 'mem_pot (shared): The teapot is blue.\nmem_kettle (private): The kettle is slow.', tool_call_id: 'call_model', tool_name: 'recall' }),
      row(6, 'turn_0', 'assistant', 'done', { text: 'Green tea, in the blue pot.', model: 'home/llama' }),
    ];
    server.turnState = 'done';
    await openConversation();
    await turnsBecome([
      { status: 'done', said: 'which tea this morning?', reply: ['Let me check one more thing.', 'Green tea, in the blue pot.', '[Used 3 memories]'] },
    ]);
    await page.locator('[data-testid=used-memories-summary]').click();
    assert.deepEqual(await page.locator('[data-testid=used-memory]').allInnerTexts(), ['Ada drinks green tea.', 'The teapot is blue.', 'The kettle is slow.']);

    // Live: the recall is no row while it runs nor once it has found something; the line says what it found.
    server.history = [...server.history, row(7, 'turn_1', 'user', 'sent', { text: 'and for lunch?' })];
    server.turnState = 'running';
    await send('and for lunch?');
    server.push(event('turn_started', 1, { model: 'home/llama' }), event('tool_call_started', 2, { call: recall('call_live', 'and for lunch?') }));
    const first = { status: 'done', said: 'which tea this morning?', reply: ['Let me check one more thing.', 'Green tea, in the blue pot.', '[Used 3 memories]'] };
    await turnsBecome([first, { status: 'running', said: 'and for lunch?', reply: [] }]);
    server.push(
      event('tool_call_finished', 3, { call_id: 'call_live', status: 'ok', result: 'mem_soup (private): Ada likes soup at noon.' }),
      event('token', 4, { text: 'Soup.' }),
    );
    await turnsBecome([first, { status: 'running', said: 'and for lunch?', reply: ['Soup.', '[Used 1 memory]'] }]);

    // A recall that found nothing keeps its row: the person sees it looked.
    server.push(
      event('tool_call_started', 5, { call: recall('call_none', 'dessert') }),
      event('tool_call_finished', 6, { call_id: 'call_none', status: 'ok', result: 'nothing remembered matches "dessert"' }),
    );
    await turnsBecome([first, { status: 'running', said: 'and for lunch?', reply: ['Soup.', '[Recall what it knows: ok]', '[Used 1 memory]'] }]);
  });

  test('a temporary chat says so before its first message, and that message makes a temporary conversation', async () => {
    await openNew(true);
    const banner = page.locator('skald-temporary-banner [data-testid=temporary-banner]');
    assert.match(await banner.innerText(), /^Temporary chat — nothing is remembered from it or recalled into it/);
    assert.equal(await page.locator('[data-testid=chat-title]').innerText(), 'Temporary chat');
    await send('a passing question');
    await waitUntil(() => server.requests.some((r) => r.call === 'POST /api/sessions/chat_1/messages'), 'the message is sent');
    assert.deepEqual(server.requests.find((r) => r.call === 'POST /api/sessions').body, { temporary: true });
    assert.ok(await banner.isVisible(), 'the banner stays once the conversation exists');
  });

  test('a new conversation that is not temporary has no banner and asks for none', async () => {
    await openNew(false);
    assert.equal(await page.locator('skald-temporary-banner').count(), 0);
    assert.equal(await page.locator('[data-testid=chat-title]').innerText(), 'New chat');
    await send('an ordinary question');
    await waitUntil(() => server.requests.some((r) => r.call === 'POST /api/sessions/chat_1/messages'), 'the message is sent');
    assert.deepEqual(server.requests.find((r) => r.call === 'POST /api/sessions').body, {});
  });
});
