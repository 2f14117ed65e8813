// The supervisor's view in Chromium, the server played through the page's routing: the
// banner says the person sees each visit; nothing of their space is read until the
// supervisor chooses what to open (each read is logged in that person's file); a
// conversation reads as its turns, with nothing to write with; the cards waiting for the
// supervisor are read only when opened, show exactly what they run, and are decided once,
// bound to the arguments shown; a space no edge opens is refused without a call.
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { componentFixture } from '../../../tests/mount.mjs';

const CY = '01ceda86270f8aa7b86b53fc4a240fdc';
const EDGE = {
  id: 'sup_1',
  supervisor_id: 'u_ada',
  supervisor_name: 'Ada',
  supervised_id: CY,
  supervised_name: 'Cy',
  state: 'active',
  at_enrolment: true,
  requested_by: 'Ada',
  requested_at: '2026-12-05T10:00:00Z',
  accepted_at: '2026-12-05T10:05:00Z',
  opens: 0,
  reads: 0,
  last_opened_at: null,
};
const CONVERSATION = {
  id: 'chat_0123456789abcdef01234567',
  agent: 'main',
  model: null,
  title: 'Trip to the coast',
  created_at: '2026-12-05T11:00:00Z',
  updated_at: '2026-12-05T11:02:00Z',
  turn_state: 'done',
  active_turn: 'turn_1',
  outside_content: false,
  pinned: false,
  archived: false,
  temporary: false,
};
const HASH = '7d1e0c9b5a4f3e2d1c0b9a8f7e6d5c4b3a291807f6e5d4c3b2a1908f7e6d5c4b';
const CARD = {
  id: 'card_9',
  kind: 'approval',
  state: 'pending',
  summary: 'Write the note "Homework"',
  session_id: 'chat_0123456789abcdef01234567',
  created_at: '2026-12-05T14:04:00Z',
  details: {
    tool: 'note_write',
    arguments: '{"title":"Homework","text":"page 12"}',
    arguments_hash: HASH,
    agent: 'main',
    why: '',
    reason: 'no rule covers note_write; your supervisor decides',
    turn_id: 'turn_2',
    call_id: 'call_9',
  },
};
const row = (id, role, text, extra = {}) => ({ id, turn_id: 'turn_1', role, text, status: 'done', created_at: '2026-12-05T11:00:00Z', ...extra });

/** Every `/api/...` request the page sent, as `METHOD /path`. */
let requests;
/** The bodies of the decisions sent, and how the played server answers the next one. */
let decisions;
let answerDecision;

beforeEach(() => {
  requests = [];
  decisions = [];
  answerDecision = (body) => ({ json: { ...CARD, state: body.allow ? 'allowed' : 'denied', decided_by: 'Ada' } });
});

async function api(route, request) {
  const { pathname } = new URL(request.url());
  requests.push(`${request.method()} ${pathname}`);
  if (pathname === `/api/supervised/${CY}/sessions`) return route.fulfill({ json: [CONVERSATION] });
  if (pathname === `/api/supervised/${CY}/sessions/${CONVERSATION.id}/messages`) {
    return route.fulfill({
      json: [
        row(1, 'user', 'Which beach is best in March?'),
        row(2, 'assistant', '', { status: 'tool_calls', tool_calls: [{ id: 'call_1', name: 'note_list', arguments: '{}' }] }),
        row(3, 'tool', '[]', { status: 'ok', tool_call_id: 'call_1', tool_name: 'note_list' }),
        row(4, 'assistant', 'Try **Porthcurno**: sheltered and quiet.', { model: 'home/llama' }),
      ],
    });
  }
  if (pathname === `/api/supervised/${CY}/cards`) return route.fulfill({ json: [CARD] });
  if (pathname === `/api/supervised/${CY}/cards/${CARD.id}`) {
    decisions.push(request.postDataJSON());
    return route.fulfill(answerDecision(request.postDataJSON()));
  }
  if (pathname === `/api/supervised/${CY}/memories`) {
    return route.fulfill({ status: 403, json: { error: { code: 'not_supervisor', message: 'you do not supervise this person' } } });
  }
  return route.fulfill({ status: 404, json: { error: { code: 'not_found', message: 'no such route here' } } });
}

describe('the supervisor\'s view', () => {
  const { page } = componentFixture(['components/skald-supervised/skald-supervised.ts', 'api/client.ts'], () => ({ api }));

  const show = (person, edges = [EDGE]) =>
    page.evaluate(
      async ({ person, edges }) => {
        const { ApiClient } = window.skald['api/client.ts'];
        const element = document.createElement('skald-supervised');
        element.login = { client: new ApiClient('token', { baseUrl: location.origin }) };
        element.edges = edges;
        element.person = person;
        document.body.append(element);
        await element.updateComplete;
      },
      { person, edges },
    );

  test('says the person sees each visit, and reads nothing until told what to open', async () => {
    await show(CY);
    const banner = page.locator('[data-testid=supervised-banner]');
    assert.equal(await banner.getAttribute('role'), 'note');
    assert.match(await banner.innerText(), /^Cy sees each time you open their space\. Every list you open and every item you read is shown to them\./);
    assert.equal(await page.getByRole('heading', { name: 'The space of Cy' }).count(), 1);
    await page.waitForTimeout(200);
    assert.deepEqual(requests, [], 'nothing of the space was read');
  });

  test('a conversation reads as its turns, read-only, its words as Markdown', async () => {
    await show(CY);
    await page.locator('[data-testid=supervised-open][data-area=conversations]').click();
    await page.locator('[data-testid=supervised-conversation]').click();
    const transcript = page.locator('[data-testid=supervised-transcript]');
    await transcript.waitFor();
    assert.deepEqual(requests, [`GET /api/supervised/${CY}/sessions`, `GET /api/supervised/${CY}/sessions/${CONVERSATION.id}/messages`]);
    const text = await transcript.innerText();
    assert.match(text, /Trip to the coast/);
    assert.match(text, /Cy\s+Which beach is best in March\?/);
    assert.match(text, /Used: List your notes/);
    assert.equal(await transcript.locator('strong').innerText(), 'Porthcurno');
    assert.equal(await page.locator('skald-supervised textarea, skald-supervised input').count(), 0, 'nothing to write with');
    const focused = await page.evaluate(() => document.querySelector('skald-supervised').shadowRoot.activeElement?.id);
    assert.equal(focused, 'opened-title', 'focus goes to what was opened');

    await page.locator('[data-testid=supervised-back]').click();
    await page.locator('[data-testid=supervised-conversation]').waitFor();
    assert.equal(requests.length, 2, 'going back to the list reads nothing again');
  });

  test('the cards waiting for the supervisor are read only when opened, and show exactly what they run', async () => {
    await show(CY);
    const open = page.locator('[data-testid=supervised-open][data-area=cards]');
    assert.equal((await open.innerText()).trim(), 'Waiting for you');
    assert.deepEqual(requests, []);
    await open.click();
    const item = page.locator(`[data-testid=supervised-card][data-id=${CARD.id}]`);
    await item.waitFor();
    assert.deepEqual(requests, [`GET /api/supervised/${CY}/cards`]);
    assert.equal(await open.getAttribute('aria-pressed'), 'true');
    assert.match(await page.locator('skald-supervised section.block').innerText(), /What the role of Cy may not approve comes to you/);
    assert.equal(await item.locator('[data-testid=card-arguments]').textContent(), JSON.stringify({ title: 'Homework', text: 'page 12' }, null, 2));
    assert.equal(await item.locator('[data-testid=always]').count(), 0);
    assert.equal(await item.locator('[data-testid=card-waiting-supervisor]').count(), 0);
  });

  test('Allow once sends the arguments\' hash; the card then says who allowed it, and nothing is left to press', async () => {
    await show(CY);
    await page.locator('[data-testid=supervised-open][data-area=cards]').click();
    const item = page.locator(`[data-testid=supervised-card][data-id=${CARD.id}]`);
    await item.locator('[data-testid=allow]').click();
    await item.locator('[data-testid=card-decided]').waitFor();
    assert.deepEqual(decisions, [{ allow: true, arguments_hash: HASH }]);
    assert.equal(await item.getAttribute('data-state'), 'allowed');
    assert.equal(await item.locator('[data-testid=card-decided]').textContent(), 'Allowed by Ada');
    assert.equal(await item.locator('[data-testid=allow], [data-testid=deny]').count(), 0);
    assert.equal(await page.locator('skald-supervised [role=status][aria-live=polite]').innerText(), 'Allowed. It runs for Cy as shown.');
    assert.deepEqual(requests, [`GET /api/supervised/${CY}/cards`, `POST /api/supervised/${CY}/cards/${CARD.id}`], 'the list is not read again');
  });

  test('a card that changed since is refused, in the server\'s words, on the card', async () => {
    answerDecision = () => ({
      status: 409,
      json: { error: { code: 'card_changed', message: 'the card changed since you saw it; look at it again before deciding' } },
    });
    await show(CY);
    await page.locator('[data-testid=supervised-open][data-area=cards]').click();
    const item = page.locator(`[data-testid=supervised-card][data-id=${CARD.id}]`);
    await item.locator('[data-testid=deny]').click();
    await item.getByRole('alert').filter({ hasText: 'The card changed since you saw it; look at it again before deciding.' }).waitFor();
    assert.deepEqual(decisions, [{ allow: false, arguments_hash: HASH }]);
    assert.equal(await item.getAttribute('data-state'), 'pending');
    assert.ok(await item.locator('[data-testid=deny]').isEnabled(), 'it may be decided again');
  });

  test('a refusal is shown as the server words it', async () => {
    await show(CY);
    await page.locator('[data-testid=supervised-open][data-area=memories]').click();
    await page.locator('[data-testid=supervised-error]').filter({ hasText: 'You do not supervise this person.' }).waitFor();
  });

  test('a space no active edge opens is refused without a call', async () => {
    await show('ffffffffffffffffffffffffffffffff');
    await page.locator('[data-testid=supervised-refused]').waitFor();
    assert.deepEqual(requests, []);
  });

  test('without a person, the people one looks after, each a link to their space', async () => {
    await show(null);
    const link = page.locator('[data-testid=supervised-person][data-name=Cy]');
    assert.equal(await link.getAttribute('href'), `#/supervised/${CY}`);
    assert.equal((await link.innerText()).trim(), 'Open the space of Cy');
    assert.deepEqual(requests, []);
  });
});
