// The supervisor's view in Chromium, the server played through the page's routing: the
// banner says the person sees each visit; nothing of their space is read until the
// supervisor chooses what to open (each read is logged in that person's file); a
// conversation reads as its turns, with nothing to write with; a space no edge opens is
// refused without a call.
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
const row = (id, role, text, extra = {}) => ({ id, turn_id: 'turn_1', role, text, status: 'done', created_at: '2026-12-05T11:00:00Z', ...extra });

/** Every `/api/...` request the page sent, as `METHOD /path`. */
let requests;

beforeEach(() => {
  requests = [];
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
