// The Supervision section in Chromium, the server played through the page's routing:
// every edge with where it stands and how much it was used; asking for one offers only
// whom the roles allow and sends their ids; a refusal is shown in the server's words; and
// Remove asks first.
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { componentFixture } from '../../../tests/mount.mjs';

const role = (id, may_supervise, may_be_supervised) => ({ id, label: id, may_supervise, may_be_supervised, may_end_supervision: false });
const person = (id, name, role, status = 'active') => ({ id, name, role, status });
const edge = (id, supervised, state, extra = {}) => ({
  id,
  supervisor_id: 'u_ada',
  supervisor_name: 'Ada',
  supervised_id: `u_${supervised.toLowerCase()}`,
  supervised_name: supervised,
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

/** What the played server answers, and what it was sent. */
let server;

beforeEach(() => {
  server = {
    roles: [role('admin', true, false), role('member', false, false), role('restricted', false, true)],
    people: [
      person('u_ada', 'Ada', 'admin'),
      person('u_bea', 'Bea', 'member'),
      person('u_cy', 'Cy', 'restricted'),
      person('u_di', 'Di', 'restricted', 'pending'),
      person('u_eve', 'Eve', 'restricted', 'deactivated'),
    ],
    edges: [edge('sup_1', 'Cy', 'active', { opens: 2, reads: 3, last_opened_at: '2026-12-05T14:00:00Z' })],
    posted: [],
    deleted: [],
    refuse: null,
  };
});

async function api(route, request) {
  const { pathname } = new URL(request.url());
  const method = request.method();
  if (pathname === '/api/roles') return route.fulfill({ json: server.roles });
  if (pathname === '/api/people') return route.fulfill({ json: server.people });
  if (method === 'GET' && pathname === '/api/supervision') return route.fulfill({ json: server.edges });
  if (method === 'POST' && pathname === '/api/supervision') {
    server.posted.push(request.postDataJSON());
    if (server.refuse) return route.fulfill({ status: 403, json: { error: { code: 'supervision_refused', message: server.refuse } } });
    const made = edge('sup_2', 'Di', 'pending', { at_enrolment: true });
    server.edges = [...server.edges, made];
    return route.fulfill({ status: 201, json: made });
  }
  const one = /^\/api\/supervision\/([^/]+)$/.exec(pathname);
  if (method === 'DELETE' && one) {
    server.deleted.push(one[1]);
    const gone = server.edges.find((e) => e.id === one[1]);
    server.edges = server.edges.filter((e) => e.id !== one[1]);
    return route.fulfill({ json: gone });
  }
  return route.fulfill({ status: 404, json: { error: { code: 'not_found', message: 'no such route here' } } });
}

describe('the Supervision section', () => {
  const { page } = componentFixture(['components/skald-admin-supervision/skald-admin-supervision.ts', 'api/client.ts'], () => ({ api }));

  const show = () =>
    page.evaluate(async () => {
      const { ApiClient } = window.skald['api/client.ts'];
      const element = document.createElement('skald-admin-supervision');
      element.login = { client: new ApiClient('token', { baseUrl: location.origin }) };
      document.body.append(element);
      await element.updateComplete;
    });
  const row = (supervised) => page.locator(`[data-testid=edge-row][data-supervised=${supervised}]`);

  test('every edge says where it stands and how much it was used', async () => {
    await show();
    await row('Cy').waitFor();
    const text = await row('Cy').innerText();
    assert.match(text, /Ada → Cy\s*Active/);
    assert.match(text, /asked by Ada, .*2026 · active since .*2026 · opened 2 times · 3 items read · last opened /);
  });

  test('asking offers only whom the roles allow, sends their ids, and lists the new edge', async () => {
    await show();
    await row('Cy').waitFor();
    assert.deepEqual(await page.locator('#edge-supervisor option').allInnerTexts(), ['Ada']);
    assert.deepEqual(await page.locator('#edge-supervised option').allInnerTexts(), ['Di'], 'not Bea (her role), Cy (already), Eve (deactivated)');
    await page.locator('[data-testid=edge-add]').click();
    await row('Di').waitFor();
    assert.deepEqual(server.posted, [{ supervisor: 'u_ada', supervised: 'u_di' }]);
    assert.match(await row('Di').innerText(), /Active once Di enrols/);
    assert.deepEqual(await page.locator('#edge-supervised option').allInnerTexts(), ['Nobody to choose']);
    assert.ok(await page.locator('[data-testid=edge-add]').isDisabled());
  });

  test('a refusal is shown in the server\'s words', async () => {
    server.refuse = 'the role Restricted may not be supervised';
    await show();
    await page.locator('[data-testid=edge-add]').click();
    await page.locator('[data-testid=edge-error]').filter({ hasText: 'The role Restricted may not be supervised.' }).waitFor();
  });

  test('Remove asks first, says what it does, and then removes', async () => {
    await show();
    await row('Cy').locator('[data-testid=edge-remove]').click();
    await page.getByText('Ada can no longer open the space of Cy: the copy of its key is destroyed.', { exact: false }).waitFor();
    assert.deepEqual(server.deleted, []);
    await page.locator('[data-testid=confirm-ok]').click();
    await page.locator('[data-testid=edges-none]').waitFor();
    assert.deepEqual(server.deleted, ['sup_1']);
  });
});
