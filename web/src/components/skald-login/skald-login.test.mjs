// The enrolment screen in Chromium, the server played through the page's routing: once a
// name and a code are in, it says who will be able to open the space before the password
// is chosen; it asks once per name and code (the server counts each check as an
// enrolment attempt); and a check that fails says nothing and holds nothing back.
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { componentFixture } from '../../../tests/mount.mjs';

const CODE = 'YLZW-YHYK-DFZK-L2JR-3E2I-QZDU-SQ';
const PASSWORD = 'maple harbour violin';

/** What the played server was sent, and who the check names. */
let server;

beforeEach(() => {
  server = { checks: [], enrolled: [], supervisors: ['Ada'] };
});

async function api(route, request) {
  const { pathname } = new URL(request.url());
  if (pathname === '/api/users') return route.fulfill({ json: [{ id: 'u_cy', name: 'Cy', role: 'restricted', status: 'pending' }] });
  if (pathname === '/api/enrol/check') {
    const body = request.postDataJSON();
    server.checks.push(`${body.name} ${body.enrolment_code}`);
    if (body.enrolment_code !== CODE) {
      return route.fulfill({ status: 401, json: { error: { code: 'invalid_enrolment', message: 'the name or enrolment code is wrong' } } });
    }
    return route.fulfill({ json: { supervisors: server.supervisors } });
  }
  if (pathname === '/api/enrol') {
    server.enrolled.push(request.postDataJSON());
    return route.fulfill({ status: 201, json: { token: 'session', user: { id: 'u_cy', name: 'Cy', role: 'restricted', status: 'active' }, recovery_code: 'CODE-1' } });
  }
  return route.fulfill({ status: 404, json: { error: { code: 'not_found', message: 'no such route here' } } });
}

describe('the enrolment screen', () => {
  const { page } = componentFixture(['components/skald-login/skald-login.ts', 'api/client.ts'], () => ({ api }));

  /** The picker, then Cy (not set up yet): the enrolment form with the name filled in. */
  const enrol = async () => {
    await page.evaluate(async () => {
      const { ApiClient } = window.skald['api/client.ts'];
      const element = document.createElement('skald-login');
      element.client = new ApiClient('launch', { baseUrl: location.origin });
      document.body.append(element);
      await element.updateComplete;
    });
    await page.locator('[data-testid=person][data-name=Cy]').click();
    await page.locator('[data-testid=enrol-form]').waitFor();
  };
  const statement = () => page.locator('[data-testid=enrol-supervisors]');

  test('names who will be able to open the space, above the password, once the code is in', async () => {
    await enrol();
    await page.locator('#code').fill(CODE);
    assert.deepEqual(server.checks, [], 'not while the code is being typed');
    await page.locator('#password').click();
    await statement().waitFor();
    assert.equal(
      (await statement().innerText()).trim(),
      'Ada will be able to open your space (your conversations, notes and memories). You will see each time they do.',
    );
    assert.equal(await page.getByText('the administrator cannot read your conversations').count(), 0, 'the lead no longer says nobody can');
    // Leaving the field again, or coming back to it, asks nothing more.
    await page.locator('#code').click();
    await page.locator('#password').click();
    assert.deepEqual(server.checks, [`Cy ${CODE}`]);
  });

  test('two supervisors are named as a list', async () => {
    server.supervisors = ['Ada', 'Bo'];
    await enrol();
    await page.locator('#code').fill(CODE);
    await page.locator('#password').click();
    await statement().filter({ hasText: /Ada and Bo will be able to open your space/ }).waitFor();
  });

  test('a check that fails says nothing, and the enrolment goes on', async () => {
    await enrol();
    await page.locator('#code').fill('WRONG-CODE');
    await page.locator('#password').click();
    while (server.checks.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    await page.locator('#password').fill(PASSWORD);
    await page.locator('#confirm').fill(PASSWORD);
    assert.equal(await statement().count(), 0);
    await page.locator('#code').fill(CODE);
    await page.getByRole('button', { name: 'Create my space' }).click();
    await page.locator('[data-testid=recovery-code]').waitFor();
    assert.deepEqual(server.enrolled, [{ name: 'Cy', enrolment_code: CODE, password: PASSWORD }]);
    assert.equal(server.checks[0], 'Cy WRONG-CODE');
  });
});
