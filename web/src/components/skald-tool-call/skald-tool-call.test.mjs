// A tool call in Chromium: its name in words and how it went, and — opened with the
// keyboard — the exact arguments and the result. A picture a call made shows under it,
// read with the bearer from the played server and shown under the page's CSP, linking to
// the Files page; one deleted since says so, and a call that failed shows none.
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { axeViolationsInThemes } from '../../../tests/e2e/harness.mjs';
import { componentFixture, mount, setProperties } from '../../../tests/mount.mjs';

const item = (extra = {}) => ({ kind: 'tool', id: 'call_1', name: 'note_write', arguments: '{"title":"Shopping","body":"eggs"}', status: 'running', result: null, ...extra });

describe('a tool call', () => {
  const { page } = componentFixture(['components/skald-tool-call/skald-tool-call.ts']);

  const host = () => page.locator('skald-tool-call');
  const status = () => page.locator('skald-tool-call summary .status').textContent();

  test('a running call says so; waiting on a card, or cut off with its turn, it says that instead', async () => {
    await mount(page, '<skald-tool-call></skald-tool-call>', { item: item() });
    assert.deepEqual([await host().getAttribute('data-status'), await status()], ['running', 'Running…']);
    await setProperties(page, 'skald-tool-call', { waiting: true });
    assert.deepEqual([await host().getAttribute('data-status'), await status()], ['waiting', 'Waiting for you']);
    await setProperties(page, 'skald-tool-call', { waiting: false, ended: true });
    assert.deepEqual([await host().getAttribute('data-status'), await status()], ['cancelled', 'Cancelled']);
  });

  test('a finished call shows how it went, whatever the turn did after', async () => {
    await mount(page, '<skald-tool-call></skald-tool-call>', { item: item({ status: 'denied', result: 'refused by Ada' }), ended: true });
    assert.deepEqual([await host().getAttribute('data-status'), await status()], ['denied', 'Refused']);
    await setProperties(page, 'skald-tool-call', { item: item({ status: 'ok', result: 'saved' }) });
    assert.deepEqual([await host().getAttribute('data-status'), await status()], ['ok', 'Done']);
  });

  test('closed it names the tool in words (its code name on hover); opened from the keyboard it shows the exact arguments and the result', async () => {
    await mount(page, '<skald-tool-call></skald-tool-call>', { item: item({ status: 'ok', result: 'saved <b>note</b> 4' }) });
    assert.equal(await page.locator('skald-tool-call .label').textContent(), 'Write a note');
    assert.equal(await page.locator('skald-tool-call .label').getAttribute('title'), 'note_write');
    assert.equal(await page.locator('skald-tool-call summary code').count(), 0, 'no code in the closed row');
    assert.equal(await page.locator('skald-tool-call pre.args').isVisible(), false);
    await page.locator('skald-tool-call summary').focus();
    await page.keyboard.press('Enter');
    assert.equal(await page.locator('skald-tool-call pre.args').textContent(), '{\n  "title": "Shopping",\n  "body": "eggs"\n}');
    assert.equal(await page.locator('skald-tool-call pre.result').textContent(), 'saved <b>note</b> 4');
    assert.equal(await page.locator('skald-tool-call pre.result b').count(), 0, 'a result is text, never markup');
  });
});

const PICTURE = 'doc_0123456789abcdef01234567';
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

/** An image_generate call; finished well, its result is the one the server writes. */
const pictureCall = (extra = {}) => ({
  kind: 'tool',
  id: 'call_2',
  name: 'image_generate',
  arguments: '{"prompt":"A fox in the snow"}',
  status: 'ok',
  result:
    `Made a picture with studio/gpt-image-1 and kept it among the person's documents as ${PICTURE} ("picture-1.png"); ` +
    `it shows in the conversation. Link to it as [picture-1.png](#/files/${PICTURE}).`,
  ...extra,
});

describe('a picture a call made', () => {
  /** Each request as the played server saw it: its address and its Authorization header. */
  let requests;
  /** Whether the picture is still there; deleted, the server answers 404. */
  let kept;
  /** Set, the picture's bytes wait for it to be called. */
  let hold;
  beforeEach(() => {
    requests = [];
    kept = true;
    hold = null;
  });

  const api = async (route, request) => {
    const url = new URL(request.url());
    requests.push({ url: url.pathname + url.search, authorization: request.headers()['authorization'] });
    if (hold !== null) await hold;
    if (url.pathname === `/api/documents/${PICTURE}/content` && kept) {
      return route.fulfill({ status: 200, headers: { 'Content-Type': 'image/png', 'X-Content-Type-Options': 'nosniff' }, body: PNG });
    }
    return route.fulfill({ status: 404, json: { error: { code: 'no_document', message: 'no such document' } } });
  };

  const { page } = componentFixture(['components/skald-tool-call/skald-tool-call.ts', 'api/client.ts'], () => ({ api }));

  /** The call, given a client that reads with the bearer `token`. */
  const show = (item) =>
    page.evaluate(async (item) => {
      const { ApiClient } = window.skald['api/client.ts'];
      const call = document.createElement('skald-tool-call');
      Object.assign(call, { item, client: new ApiClient('secret-token', { baseUrl: location.origin }) });
      document.body.append(call);
      await call.updateComplete;
    }, item);
  const picture = () => page.locator('skald-tool-call skald-picture [data-testid=picture]');
  const state = () => page.locator('skald-tool-call skald-picture').getAttribute('data-state');
  /** axe's findings about the element, not about the bare test page around it (no <main>, no <h1>). */
  const axe = async () => (await axeViolationsInThemes(page)).filter((v) => !/: (landmark-one-main|page-has-heading-one|region) /.test(v));

  test('a finished image_generate call shows the picture, read with the bearer, described and linking to it', async () => {
    await show(pictureCall());
    await picture().waitFor({ timeout: 5_000 });
    assert.equal(await picture().getAttribute('alt'), 'Picture: A fox in the snow');
    assert.equal(await page.locator('skald-tool-call [data-testid=picture-link]').getAttribute('href'), `#/files/${PICTURE}`);
    assert.match(await picture().getAttribute('src'), /^data:image\/png;base64,/, 'a data: address, which the CSP allows');
    assert.equal(await picture().evaluate((img) => img.complete && img.naturalWidth), 1, 'drawn, not refused');
    assert.ok(await picture().isVisible(), 'shown with the call closed');
    assert.deepEqual(requests, [{ url: `/api/documents/${PICTURE}/content`, authorization: 'Bearer secret-token' }], 'the token in a header, never the address');
    assert.deepEqual(await picture().evaluate((img) => [getComputedStyle(img).maxWidth, getComputedStyle(img).maxHeight]), ['100%', '360px'], 'never wider than the column nor taller than 360px');
    assert.deepEqual(await axe(), [], 'accessibility of the call and its picture');
    await page.locator('skald-tool-call [data-testid=picture-link]').click();
    assert.equal(await page.evaluate(() => location.hash), `#/files/${PICTURE}`, 'it opens the viewer');
  });

  test('while the picture is read a placeholder stands in for it', async () => {
    let release;
    hold = new Promise((resolve) => (release = resolve));
    await show(pictureCall());
    await page.locator('skald-tool-call [data-testid=picture-loading]').waitFor({ timeout: 5_000 });
    assert.equal(await page.locator('skald-tool-call [data-testid=picture-loading]').textContent(), 'Loading the picture…');
    assert.equal(await state(), 'loading');
    release();
    await picture().waitFor({ timeout: 5_000 });
    assert.equal(await state(), 'image');
  });

  test('a picture deleted since says so instead', async () => {
    kept = false;
    await show(pictureCall());
    await page.locator('skald-tool-call [data-testid=picture-deleted]').waitFor({ timeout: 5_000 });
    assert.equal(await page.locator('skald-tool-call [data-testid=picture-deleted]').textContent(), 'This picture has been deleted.');
    assert.equal(await picture().count(), 0);
    assert.deepEqual(await axe(), [], 'accessibility of the deleted line');
  });

  test('a call that failed, or still runs, shows no picture and reads none', async () => {
    await show(pictureCall({ status: 'error', result: 'studio/gpt-image-1 made no picture: quota exceeded' }));
    assert.equal(await page.locator('skald-tool-call').getAttribute('data-status'), 'error');
    assert.equal(await page.locator('skald-tool-call skald-picture').count(), 0);
    await setProperties(page, 'skald-tool-call', { item: pictureCall({ status: 'running', result: null }) });
    assert.equal(await page.locator('skald-tool-call skald-picture').count(), 0);
    assert.deepEqual(requests, [], 'nothing read');
  });
});
