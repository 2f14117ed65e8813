// Files attached to the next message, in Chromium, the server played through the page's
// routing under its Content-Security-Policy: each file picked goes up into the person's own
// files (the same bytes kept already answer as that document) and shows as a chip with its
// name and how it stands — uploading, being read (asked after, less and less often, until
// read), ready, or why it will not go; the chat is told the documents ready and whether
// any is still on its way; more than a message takes are left out, saying so; removing a
// chip takes the file off the message and deletes nothing; after a send the chat clears
// what went; leaving the page stops the asking after.
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { axeViolationsInThemes } from '../../../tests/e2e/harness.mjs';
import { componentFixture, emitted, recordEvents } from '../../../tests/mount.mjs';

/** The played server: documents by id, every request as `METHOD /path?query`, the uploads. */
let documents;
let requests;
let uploaded;
/** How many more times a document just uploaded is `reading` when asked, by name. */
let readingFor;
/** Uploads held back until released (by name): `release(name)` lets one answer. */
let held;
let nextId;

beforeEach(() => {
  documents = new Map();
  requests = [];
  uploaded = [];
  readingFor = new Map();
  held = new Map();
  nextId = 0;
});

const idFor = (n) => `doc_${String(n).padStart(24, '0')}`;

const doc = (id, name, extra = {}) => ({
  id,
  name,
  pool: 'private',
  kind: 'text',
  media_type: 'text/plain',
  size: 10,
  pages: null,
  status: 'reading',
  status_detail: null,
  created_at: '2026-12-05T10:00:00Z',
  uploaded_by: null,
  uploaded_by_name: null,
  local_only: false,
  ...extra,
});

async function api(route, request) {
  const url = new URL(request.url());
  const { pathname } = url;
  requests.push(`${request.method()} ${pathname}${url.search}`);
  const fail = (status, code, message) => route.fulfill({ status, json: { error: { code, message } } });
  if (pathname === '/api/documents' && request.method() === 'POST') {
    const name = url.searchParams.get('name');
    const bytes = request.postDataBuffer()?.toString() ?? '';
    uploaded.push({ name, pool: url.searchParams.get('pool'), existing: url.searchParams.get('existing'), bytes });
    if (held.has(name)) await held.get(name).promise;
    if (name.endsWith('.exe')) return fail(415, 'unsupported_type', 'this kind of file is not taken: programs and unknown types are refused');
    const kept = [...documents.values()].find((d) => d.bytes === bytes);
    if (kept) return route.fulfill({ status: 200, json: kept.document });
    const document = doc(idFor(++nextId), name);
    documents.set(document.id, { bytes, document });
    return route.fulfill({ status: 201, json: document });
  }
  const match = /^\/api\/documents\/(doc_\w+)$/.exec(pathname);
  const found = match && documents.get(match[1]);
  if (!found) return fail(404, 'no_document', 'no such document');
  const { document } = found;
  const left = readingFor.get(document.name) ?? 1;
  readingFor.set(document.name, left - 1);
  if (document.status === 'reading' && left <= 0) {
    if (document.name === 'scan.pdf') Object.assign(document, { status: 'no_text', status_detail: 'No text found: install OCR (tesseract) to read scanned pages.' });
    else if (document.name === 'photo.png') Object.assign(document, { kind: 'png', media_type: 'image/png', status: 'no_text', status_detail: 'No words were found in the picture.' });
    else Object.assign(document, { status: 'ready', pages: 1 });
  }
  return route.fulfill({ json: document });
}

/** Holds the upload of `name` back until `release(name)`. */
function hold(name) {
  let release;
  const promise = new Promise((resolve) => (release = resolve));
  held.set(name, { promise, release });
}
const release = (name) => held.get(name).release();

const file = (name, text = name) => ({ name, mimeType: 'text/plain', buffer: Buffer.from(text) });

describe('files attached to a message', () => {
  const { page } = componentFixture(['components/skald-attachments/skald-attachments.ts', 'api/client.ts'], () => ({ api }));

  const show = async () => {
    await page.evaluate(async () => {
      const { ApiClient } = window.skald['api/client.ts'];
      const element = document.createElement('skald-attachments');
      element.login = { client: new ApiClient('token', { baseUrl: location.origin }) };
      document.body.append(element);
      await element.updateComplete;
    });
    await recordEvents(page, ['skald-attachments-change']);
  };
  const pick = (...files) => page.locator('[data-testid=attach-input]').setInputFiles(files);
  const chips = () => page.locator('[data-testid=attachment]');
  const chip = (name) => chips().filter({ has: page.locator('[data-testid=attachment-name]', { hasText: name }) });
  const states = () => chips().evaluateAll((all) => all.map((c) => [c.querySelector('[data-testid=attachment-name]').textContent, c.dataset.state]));
  const announced = () => page.locator('skald-attachments [role=status][aria-live=polite]').textContent();
  const lastTold = async () => (await emitted(page)).at(-1);
  const polls = () => requests.filter((r) => r.startsWith('GET /api/documents/')).length;
  /** axe's findings about the element, not the bare test page around it. */
  const axe = async () => (await axeViolationsInThemes(page)).filter((v) => !/: (landmark-one-main|page-has-heading-one|region) /.test(v));

  test('the paperclip names what it does; files picked go into my own files, each a chip from uploading to ready', async () => {
    await show();
    const attach = page.locator('[data-testid=attach]');
    assert.equal(await attach.getAttribute('aria-label'), 'Attach a file');
    assert.equal(await attach.getAttribute('title'), 'Attach a file');
    const describedBy = await attach.getAttribute('aria-describedby');
    assert.match(await page.locator(`skald-attachments #${describedBy}`).textContent(), /^Up to 4 files go with a message/);
    assert.equal(await page.locator('[data-testid=attach-input]').getAttribute('multiple'), '');

    hold('plan.md');
    await pick(file('plan.md', '# Plan'), file('list.txt', 'eggs, flour'));
    await chip('plan.md').and(page.locator('[data-state=uploading]')).waitFor();
    assert.match(await chip('plan.md').locator('[data-testid=attachment-state]').innerText(), /^Uploading, \d+%$/);
    assert.deepEqual(await lastTold(), { type: 'skald-attachments-change', documents: [], pending: true });
    release('plan.md');

    await chip('plan.md').and(page.locator('[data-state=ready]')).waitFor({ timeout: 5000 });
    await chip('list.txt').and(page.locator('[data-state=ready]')).waitFor({ timeout: 5000 });
    assert.deepEqual(
      uploaded.map(({ name, pool, existing, bytes }) => ({ name, pool, existing, bytes })).sort((a, b) => a.name.localeCompare(b.name)),
      [
        { name: 'list.txt', pool: 'private', existing: 'use', bytes: 'eggs, flour' },
        { name: 'plan.md', pool: 'private', existing: 'use', bytes: '# Plan' },
      ],
    );
    assert.equal(await chip('list.txt').locator('[data-testid=attachment-state]').innerText(), 'Ready');
    // plan.md was held back: list.txt was kept first.
    assert.equal(await chip('list.txt').getAttribute('data-id'), idFor(1));
    assert.deepEqual(await states(), [
      ['plan.md', 'ready'],
      ['list.txt', 'ready'],
    ], 'in the order picked');
    assert.deepEqual(await lastTold(), {
      type: 'skald-attachments-change',
      documents: [
        { id: idFor(2), name: 'plan.md' },
        { id: idFor(1), name: 'list.txt' },
      ],
      pending: false,
    });
    assert.match(await announced(), /is ready\.$/);

    const asked = polls();
    await page.waitForTimeout(2500);
    assert.equal(polls(), asked, 'no more asking once both are read');
    assert.equal(await page.locator('skald-attachments ul[aria-label="Files attached to your message"] > li').count(), 2, 'the chips are a list');
    assert.deepEqual(await axe(), [], 'accessibility of the chips');
  });

  test('a document being read is asked after less and less often', async () => {
    await show();
    readingFor.set('long.txt', 3);
    await pick(file('long.txt'));
    await chip('long.txt').and(page.locator('[data-state=reading]')).waitFor({ timeout: 5000 });
    assert.equal(await chip('long.txt').locator('[data-testid=attachment-state]').innerText(), 'Reading…');
    const times = [];
    const started = Date.now();
    page.on('request', (r) => {
      if (/\/api\/documents\/doc_/.test(r.url())) times.push(Date.now() - started);
    });
    await chip('long.txt').and(page.locator('[data-state=ready]')).waitFor({ timeout: 10_000 });
    const gaps = times.slice(1).map((t, i) => t - times[i]);
    assert.ok(gaps.length >= 2, `asked several times: ${times}`);
    assert.ok(gaps.every((gap, i) => i === 0 || gap >= gaps[i - 1] - 50), `each wait no shorter than the one before: ${gaps}`);
  });

  test('an empty file, a refused one and one without text each say why, and none goes with the message', async () => {
    await show();
    await pick(file('ok.txt'), { name: 'empty.txt', mimeType: 'text/plain', buffer: Buffer.alloc(0) }, file('setup.exe', 'MZ'), file('scan.pdf', '%PDF'));
    await chip('ok.txt').and(page.locator('[data-state=ready]')).waitFor({ timeout: 5000 });
    await chip('scan.pdf').and(page.locator('[data-state=failed]')).waitFor({ timeout: 5000 });
    await chip('setup.exe').and(page.locator('[data-state=failed]')).waitFor({ timeout: 5000 });
    const why = (name) => chip(name).locator('[data-testid=attachment-state]').innerText();
    assert.equal(await why('empty.txt'), 'empty.txt is empty.');
    assert.equal(await why('setup.exe'), 'This kind of file is not taken: programs and unknown types are refused.');
    assert.equal(await why('scan.pdf'), 'No text found — No text found: install OCR (tesseract) to read scanned pages.');
    assert.deepEqual(
      uploaded.map((u) => u.name),
      ['ok.txt', 'setup.exe', 'scan.pdf'],
      'an empty file is never sent',
    );
    assert.deepEqual(await lastTold(), { type: 'skald-attachments-change', documents: [{ id: idFor(1), name: 'ok.txt' }], pending: false });
    assert.deepEqual(await axe(), [], 'accessibility of the chips that failed');
  });

  test('a picture with no words in it is still attached: a model that reads pictures sees it', async () => {
    await show();
    await pick(file('photo.png', 'PNG bytes'));
    await chip('photo.png').and(page.locator('[data-state=ready]')).waitFor({ timeout: 5000 });
    assert.equal(await announced(), 'photo.png is attached as a picture: models that read pictures see it; others cannot.');
    assert.deepEqual(await lastTold(), { type: 'skald-attachments-change', documents: [{ id: idFor(1), name: 'photo.png' }], pending: false });
  });

  test('more files than a message takes: the first four are attached, and it says how many were left out', async () => {
    await show();
    await pick(...['a', 'b', 'c', 'd', 'e', 'f'].map((n) => file(`${n}.txt`)));
    assert.equal(await chips().count(), 4);
    assert.equal(await page.locator('[data-testid=attachments-note]').innerText(), 'A message takes at most 4 files: 2 files were left out.');
    assert.match(await announced(), /2 files were left out\.$/);
    await page.locator('[data-testid=attachment][data-state=ready]').nth(3).waitFor({ timeout: 5000 });
    await pick(file('g.txt'));
    assert.equal(await chips().count(), 4);
    assert.equal(await page.locator('[data-testid=attachments-note]').innerText(), 'A message takes at most 4 files: 1 file was left out.');
    assert.deepEqual(
      uploaded.map((u) => u.name),
      ['a.txt', 'b.txt', 'c.txt', 'd.txt'],
    );
  });

  test('the same file picked again is the same document, attached once', async () => {
    await show();
    await pick(file('notes.txt', 'same bytes'));
    await chip('notes.txt').and(page.locator('[data-state=ready]')).waitFor({ timeout: 5000 });
    await pick(file('notes copy.txt', 'same bytes'));
    await page.waitForFunction(() => /attached already/.test(document.querySelector('skald-attachments').shadowRoot.querySelector('[role=status]').textContent));
    assert.deepEqual(await states(), [['notes.txt', 'ready']]);
    assert.equal(await announced(), 'notes.txt is attached already.');
  });

  test('remove takes a file off the message only: nothing is deleted, its asking after stops, the focus moves on', async () => {
    await show();
    readingFor.set('slow.txt', 1000);
    await pick(file('first.txt'), file('slow.txt'));
    await chip('first.txt').and(page.locator('[data-state=ready]')).waitFor({ timeout: 5000 });
    await chip('slow.txt').and(page.locator('[data-state=reading]')).waitFor({ timeout: 5000 });
    assert.equal(await lastTold().then((t) => t.pending), true);

    const remove = chip('slow.txt').locator('[data-testid=attachment-remove]');
    assert.equal(await remove.getAttribute('aria-label'), 'Remove slow.txt from this message');
    await remove.click();
    assert.deepEqual(await states(), [['first.txt', 'ready']]);
    assert.equal(await announced(), 'slow.txt will not go with the message.');
    assert.deepEqual(await lastTold(), { type: 'skald-attachments-change', documents: [{ id: idFor(1), name: 'first.txt' }], pending: false });
    const focused = () => page.evaluate(() => document.querySelector('skald-attachments').shadowRoot.activeElement?.getAttribute('aria-label'));
    assert.equal(await focused(), 'Remove first.txt from this message', 'the focus goes to the chip before');
    const asked = polls();
    await page.waitForTimeout(2500);
    assert.equal(polls(), asked, 'a file taken off is no longer asked after');

    await page.keyboard.press('Enter');
    assert.equal(await chips().count(), 0);
    assert.equal(await focused(), 'Attach a file', 'with no chip left, the focus goes to the paperclip');
    assert.ok(!requests.some((r) => r.startsWith('DELETE')), 'no document was deleted');
  });

  test('after a send, what went and what could not go are cleared; a file still on its way stays', async () => {
    await show();
    await pick(file('sent.txt'), file('setup.exe', 'MZ'));
    await chip('sent.txt').and(page.locator('[data-state=ready]')).waitFor({ timeout: 5000 });
    await chip('setup.exe').and(page.locator('[data-state=failed]')).waitFor({ timeout: 5000 });
    readingFor.set('late.txt', 1000);
    await pick(file('late.txt'));
    await chip('late.txt').and(page.locator('[data-state=reading]')).waitFor({ timeout: 5000 });
    await page.evaluate((id) => document.querySelector('skald-attachments').clear([id]), idFor(1));
    assert.deepEqual(await states(), [['late.txt', 'reading']]);
    assert.deepEqual(await lastTold(), { type: 'skald-attachments-change', documents: [], pending: true });
    await page.evaluate(() => document.querySelector('skald-attachments').clear());
    assert.equal(await chips().count(), 0);
    assert.deepEqual(await lastTold(), { type: 'skald-attachments-change', documents: [], pending: false });
  });

  test('leaving the page stops the asking after; coming back starts it again', async () => {
    await show();
    readingFor.set('book.txt', 3);
    await pick(file('book.txt'));
    await chip('book.txt').and(page.locator('[data-state=reading]')).waitFor({ timeout: 5000 });
    const element = await page.evaluateHandle(() => {
      const element = document.querySelector('skald-attachments');
      element.remove();
      return element;
    });
    const asked = polls();
    await page.waitForTimeout(2500);
    assert.equal(polls(), asked, 'nothing asked while off the page');
    await element.evaluate((el) => document.body.append(el));
    await chip('book.txt').and(page.locator('[data-state=ready]')).waitFor({ timeout: 10_000 });
  });
});
