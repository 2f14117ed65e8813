// The supervised person's part of the privacy page in Chromium, the server played through
// the page's routing: a request says what accepting means and is accepted only after a
// confirmation, or declined; End is offered only where the role lets the person end it;
// each visit is a sentence under its day; and a new key hands the new session up, after a
// wrong password has said so and changed nothing.
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { componentFixture, emitted, recordEvents } from '../../../tests/mount.mjs';

const PASSWORD = 'maple harbour violin';

const edge = (id, state, extra = {}) => ({
  id,
  supervisor_id: 'u_ada',
  supervisor_name: 'Ada',
  supervised_id: 'u_cy',
  supervised_name: 'Cy',
  state,
  at_enrolment: false,
  requested_by: 'Ada',
  requested_at: '2026-12-05T10:00:00Z',
  accepted_at: state === 'active' ? '2026-12-05T10:05:00Z' : null,
  opens: 0,
  reads: 0,
  last_opened_at: null,
  ...extra,
});
const entry = (id, action, what, item = null, at = '2026-12-05T14:02:00Z') => ({
  id,
  supervisor_id: 'u_ada',
  supervisor_name: 'Ada',
  at,
  action,
  what,
  item,
});

/** What the played server answers, and what it was sent. */
let server;

beforeEach(() => {
  server = { mine: { supervising: [], supervised_by: [] }, log: [], calls: [] };
});

async function api(route, request) {
  const { pathname } = new URL(request.url());
  const method = request.method();
  if (method === 'GET' && pathname === '/api/me/supervision') return route.fulfill({ json: server.mine });
  if (method === 'GET' && pathname === '/api/me/access-log') return route.fulfill({ json: server.log });
  const accept = /^\/api\/supervision\/([^/]+)\/accept$/.exec(pathname);
  if (method === 'POST' && accept) {
    server.calls.push(`accept ${accept[1]}`);
    const accepted = edge(accept[1], 'active');
    server.mine = { supervising: [], supervised_by: [accepted] };
    return route.fulfill({ json: accepted });
  }
  const end = /^\/api\/supervision\/([^/]+)$/.exec(pathname);
  if (method === 'DELETE' && end) {
    server.calls.push(`end ${end[1]}`);
    const ended = server.mine.supervised_by.find((e) => e.id === end[1]);
    server.mine = { supervising: [], supervised_by: [] };
    return route.fulfill({ json: ended });
  }
  if (method === 'POST' && pathname === '/api/me/rotate-key') {
    const { password } = request.postDataJSON();
    server.calls.push('rotate');
    if (password !== PASSWORD) {
      return route.fulfill({ status: 401, json: { error: { code: 'invalid_credentials', message: 'the name or password is wrong' } } });
    }
    return route.fulfill({ json: { token: 'new-session', user: { id: 'u_cy', name: 'Cy', role: 'restricted', status: 'active' }, recovery_code: 'NEW1-CODE' } });
  }
  return route.fulfill({ status: 404, json: { error: { code: 'not_found', message: 'no such route here' } } });
}

describe('who can open my space, on the privacy page', () => {
  const { page } = componentFixture(['components/skald-supervisors/skald-supervisors.ts', 'api/client.ts'], () => ({ api }));

  /** Mounts the element with a login whose role may or may not end a supervision, and its notices. */
  const show = (mayEnd = false, notices = []) =>
    page.evaluate(
      async ({ mayEnd, notices }) => {
        const { ApiClient } = window.skald['api/client.ts'];
        window.login = {
          client: new ApiClient('token', { baseUrl: location.origin }),
          me: { user: { id: 'u_cy', name: 'Cy', role: 'restricted', status: 'active' }, role: { may_end_supervision: mayEnd } },
          notices: Object.assign(new EventTarget(), { notices }),
          rekeying: null,
        };
        const element = document.createElement('skald-supervisors');
        element.login = window.login;
        document.body.append(element);
        await element.updateComplete;
      },
      { mayEnd, notices },
    );

  test('a request says what accepting means, and is accepted only once confirmed', async () => {
    server.mine = { supervising: [], supervised_by: [edge('sup_1', 'pending')] };
    await show();
    await recordEvents(page, ['skald-supervision-changed']);
    const request = page.locator('[data-testid=supervision-request][data-supervisor=Ada]');
    await request.waitFor();
    assert.match(
      await request.innerText(),
      /Ada will be able to open and read your conversations, notes and memories; every time they do, you will see it here\./,
    );
    await request.locator('[data-testid=supervision-accept]').click();
    await page.getByRole('heading', { name: 'Let Ada open your space?' }).waitFor();
    assert.deepEqual(server.calls, [], 'nothing is sent before the confirmation');
    await page.locator('[data-testid=confirm-ok]').click();
    await page.locator('[data-testid=supervisor-edge][data-supervisor=Ada]').waitFor();
    assert.deepEqual(server.calls, ['accept sup_1']);
    assert.equal(await request.count(), 0);
    assert.deepEqual(await emitted(page), [{ type: 'skald-supervision-changed' }], 'the page reads who can open the space again');
  });

  test('Decline sends the request away', async () => {
    server.mine = { supervising: [], supervised_by: [edge('sup_2', 'pending')] };
    await show();
    await page.locator('[data-testid=supervision-decline]').click();
    await page.locator('[data-testid=supervision-request]').waitFor({ state: 'detached' });
    assert.deepEqual(server.calls, ['end sup_2']);
  });

  test('End is offered only where the role lets the person end it', async () => {
    server.mine = { supervising: [], supervised_by: [edge('sup_3', 'active', { opens: 2 })] };
    await show(false);
    const row = page.locator('[data-testid=supervisor-edge][data-supervisor=Ada]');
    await row.waitFor();
    assert.match(await row.innerText(), /Ada can open your space, since .*2026\.\s+Opened it 2 times so far\./);
    assert.equal(await row.locator('[data-testid=supervision-end]').count(), 0);
    assert.equal(await row.locator('[data-testid=supervision-end-refused]').innerText(), 'Your role does not let you end this yourself; an administrator can.');

    await page.evaluate(() => document.querySelector('skald-supervisors').remove());
    await show(true);
    await row.locator('[data-testid=supervision-end]').click();
    await page.locator('[data-testid=confirm-ok]').click();
    await row.waitFor({ state: 'detached' });
    assert.deepEqual(server.calls, ['end sup_3']);
  });

  test('each visit is a sentence under its day, the newest first', async () => {
    server.mine = { supervising: [], supervised_by: [edge('sup_4', 'active')] };
    server.log = [
      entry(5, 'read', 'memories', null, '2026-12-05T14:09:00Z'),
      entry(4, 'read', 'conversation', 'chat_b', '2026-12-05T14:05:00Z'),
      entry(3, 'read', 'conversation', 'chat_a', '2026-12-05T14:04:00Z'),
      entry(2, 'read', 'conversation', 'chat_a', '2026-12-05T14:03:00Z'),
      entry(1, 'opened', 'conversations', null, '2026-12-05T14:02:00Z'),
    ];
    await show();
    const visits = page.locator('[data-testid=access-visit]');
    await visits.first().waitFor();
    const said = (await visits.allInnerTexts()).map((text) => text.trim());
    assert.equal(said.length, 2);
    assert.match(said[0], /^Ada read your memories at \d{1,2}:09( [AP]M)?\.$/);
    assert.match(said[1], /^Ada opened your conversations at \d{1,2}:02( [AP]M)? and read 2 of them\.$/);
    assert.equal(await visits.first().getAttribute('data-area'), 'memories');
    assert.equal(await page.locator('h5.day').count(), 1, 'one day heading for the visits of one day');
  });

  test('a new key: a wrong password says so; the right one hands the new session up and is not kept', async () => {
    await show(false, [{ id: 9, kind: 'supervision_ended', body: { supervisor: 'Ada', by: 'Ada', rotate: true }, created_at: '', holds: false }]);
    await recordEvents(page, ['skald-key-rotated']);
    assert.equal(
      await page.locator('[data-testid=supervision-ended]').innerText(),
      'Ada can no longer open your space. Give it a new key now, so that nothing they may have kept opens it.',
    );
    assert.equal(await page.locator('[data-testid=supervision-visits]').count(), 0, 'nobody to list, nothing opened');

    await page.locator('[data-testid=rekey-submit]').click();
    await page.locator('[data-testid=rekey-error]').filter({ hasText: 'Type your password first.' }).waitFor();
    assert.deepEqual(server.calls, []);

    await page.locator('#rekey-password').fill('not my password');
    await page.locator('[data-testid=rekey-submit]').click();
    await page.locator('[data-testid=rekey-error]').filter({ hasText: 'That is not your current password.' }).waitFor();
    assert.equal(await page.evaluate(() => window.login.rekeying), null, 'a refused replacement leaves no rotation under way');
    assert.deepEqual(await emitted(page), []);

    await page.locator('#rekey-password').fill(PASSWORD);
    await page.locator('[data-testid=rekey-submit]').click();
    await page.waitForFunction(() => window.emitted.length > 0);
    const [rotated] = await emitted(page);
    assert.equal(rotated.type, 'skald-key-rotated');
    assert.equal(rotated.unlocked.token, 'new-session');
    assert.equal(rotated.unlocked.recovery_code, 'NEW1-CODE');
    assert.equal(await page.evaluate(async () => (await window.login.rekeying).token), 'new-session', 'the app can take the new session from the login too');
    assert.equal(await page.locator('#rekey-password').inputValue(), '', 'the password is not kept on the page');
    assert.deepEqual(server.calls, ['rotate', 'rotate']);
  });
});
