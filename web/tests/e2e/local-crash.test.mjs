// A model that keeps crashing the built-in model's worker process, in the browser: the
// administrator's models page says Skald stopped starting it, how the worker ended and
// what it last wrote to its log, and "Try again" lets it start again. The worker is made
// to abort at its first token by the server's debug-only hook (SKALD_TEST_LOCAL_ABORT_FILE).
//
//   SKALD_BIN=/path/to/skald npm run test:e2e
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';

import { api, axeViolationsInThemes, logIn, makeRoot, openPage, problems, removeRoot, startStack, stopStack } from './harness.mjs';

const GGUF = process.env.SKALD_TEST_GGUF || path.join(homedir(), '.cache', 'skald', 'models', 'SmolLM2-135M-Instruct.Q4_1.gguf');
const ADA = { name: 'Ada', password: 'otter lantern quietly' };
const TIMEOUT = 60_000;

/** Polls a conversation until its turn has ended; the closing row. */
async function turnEnd(origin, token, session) {
  const deadline = Date.now() + TIMEOUT;
  for (;;) {
    const rows = await api(origin, token, 'GET', `/api/sessions/${session}/messages`);
    const last = rows.at(-1);
    if (last?.role === 'assistant' && last.status !== 'streaming') return last;
    assert.ok(Date.now() < deadline, `the turn did not end: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('a model that crashes the engine', { skip: existsSync(GGUF) ? false : `no test model at ${GGUF}: run tests/fetch-test-model.sh` }, () => {
  let stack = {};
  let scratch;
  let hook;

  before(async () => {
    scratch = await makeRoot();
    hook = path.join(scratch, 'abort');
    await writeFile(hook, '');
    stack = await startStack({
      model: false,
      // The test model lives outside the server's own home: the import folders name it.
      env: { SKALD_TEST_LOCAL_ABORT_FILE: hook, SKALD_LOCAL_THREADS: '1', SKALD_LOCAL_MAX_OUTPUT: '20', SKALD_IMPORT_DIRS: path.dirname(GGUF) },
    });
  });

  after(async () => {
    await stopStack(stack);
    await removeRoot(scratch);
  });

  test('is shown with how the engine ended and its last words, and starts again when asked', async () => {
    const { origin, token: launch } = stack.server;
    const admin = await api(origin, launch, 'POST', '/api/setup', ADA);
    const imported = await api(origin, admin.token, 'POST', '/api/local-models', { path: GGUF });
    for (let round = 1; round <= 3; round += 1) {
      const { id } = await api(origin, admin.token, 'POST', '/api/sessions', { model: imported.model });
      await api(origin, admin.token, 'POST', `/api/sessions/${id}/messages`, { text: 'Hello there.' });
      const end = await turnEnd(origin, admin.token, id);
      assert.equal(end.error_code, 'local_model_crashed', `round ${round}: ${JSON.stringify(end)}`);
    }

    const session = await openPage(stack.browser, `${origin}/#token=${launch}`);
    const p = session.page;
    await logIn(p, ADA, TIMEOUT);
    await p.evaluate(() => {
      window.location.hash = '#/admin/models';
    });
    const notice = p.locator(`[data-testid=local-model][data-id=${imported.id}] [data-testid=local-crash]`);
    await notice.waitFor({ timeout: TIMEOUT });
    assert.equal(await notice.getAttribute('data-given-up'), 'true');
    const said = await notice.innerText();
    assert.match(said, /stopped starting/);
    assert.match(said, /3 times in ten minutes/);
    assert.match(said, /killed by SIGABRT/);
    await notice.locator('summary').click();
    assert.match(await notice.locator('[data-testid=local-crash-tail]').innerText(), /aborting at the test hook's request/);
    assert.deepEqual(await axeViolationsInThemes(p, { screenshot: 'admin-local-crash' }), [], 'accessibility problems on the crash notice');

    // Mended (the hook removed), it is tried again only when the administrator asks.
    await rm(hook);
    await notice.locator('[data-testid=local-crash-retry]').click();
    await notice.waitFor({ state: 'detached', timeout: TIMEOUT });
    const report = await api(origin, admin.token, 'GET', '/api/local-models');
    assert.deepEqual(report.engine.crashes, []);
    const { id } = await api(origin, admin.token, 'POST', '/api/sessions', { model: imported.model });
    await api(origin, admin.token, 'POST', `/api/sessions/${id}/messages`, { text: 'Hello again.' });
    assert.equal((await turnEnd(origin, admin.token, id)).status, 'done');
    assert.deepEqual(problems(session.consoleMessages), [], `console errors; server stderr:\n${stack.server.stderr()}`);
    await session.close();
  });
});
