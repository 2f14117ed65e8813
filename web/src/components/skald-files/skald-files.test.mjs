// The Files page in Chromium, the server played through the page's routing and the page
// under the server's Content-Security-Policy: documents listed with their kind, size,
// pages, date and status in words, shared ones labelled with who uploaded them; uploads
// from the file field into the chosen pool, with progress, asked after every second until
// read; drops onto the page, and files refused before they are sent; search hits with the
// matches marked and everything else escaped, each linking to its page; delete after
// asking; and the viewer: text a page at a time as plain text, Markdown with images left
// inert, an image from a data: address, and a PDF drawn by pdf.js with its words in a text
// layer — each without a CSP violation (the fixture fails a test on any console error).
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { axeViolationsInThemes } from '../../../tests/e2e/harness.mjs';
import { tinyPdf } from '../../../tests/e2e/pdf.mjs';
import { componentFixture } from '../../../tests/mount.mjs';

const ADA = 'u_ada';
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const PDF = tinyPdf(['Café crème', 'second page']);

const doc = (id, name, kind, extra = {}) => ({
  id,
  name,
  pool: 'private',
  kind,
  media_type: 'application/octet-stream',
  size: 2048,
  pages: 1,
  status: 'ready',
  status_detail: null,
  created_at: '2026-12-05T10:00:00Z',
  uploaded_by: null,
  uploaded_by_name: null,
  ...extra,
});

/** What the played server holds: documents, their bytes, their pages of text. */
let documents;
let contents;
let texts;
let requests;
/** The bodies of the uploads, as `{ name, pool, bytes }`. */
let uploaded;
/** How many more times a document just uploaded is still `reading` when asked. */
let readingFor;

beforeEach(() => {
  documents = [
    doc('doc_notes', 'notes.txt', 'text', { pages: 2, media_type: 'text/plain' }),
    doc('doc_scan', 'scan.pdf', 'pdf', { status: 'no_text', status_detail: 'No text found: install OCR (tesseract) to read scanned pages.' }),
    doc('doc_broken', 'broken.docx', 'docx', { status: 'failed', status_detail: 'The file is damaged.', pages: null }),
    doc('doc_rules', 'house-rules.md', 'markdown', {
      pool: 'shared',
      uploaded_by: 'u_bea',
      uploaded_by_name: 'Bea',
      media_type: 'text/markdown',
    }),
  ];
  contents = new Map([
    ['doc_rules', ['text/markdown', Buffer.from('# House rules\n\nShoes **off**.\n\n![a tracker](https://tracker.example/pixel.png)\n')]],
    ['doc_notes', ['text/plain', Buffer.from('unused')]],
    ['doc_scan', ['application/pdf', PDF]],
    ['doc_photo', ['image/png', PNG]],
  ]);
  texts = new Map([
    ['doc_notes', ['First page: <b>not bold</b> & kept as typed.', 'Second page of the notes.']],
  ]);
  requests = [];
  uploaded = [];
  readingFor = 2;
});

async function api(route, request) {
  const url = new URL(request.url());
  const { pathname } = url;
  requests.push(`${request.method()} ${pathname}${url.search}`);
  const fail = (status, code, message) => route.fulfill({ status, json: { error: { code, message } } });
  if (pathname === '/api/documents' && request.method() === 'GET') return route.fulfill({ json: documents });
  if (pathname === '/api/documents' && request.method() === 'POST') {
    const name = url.searchParams.get('name');
    const pool = url.searchParams.get('pool');
    const bytes = request.postDataBuffer() ?? Buffer.alloc(0);
    uploaded.push({ name, pool, bytes: bytes.toString('utf8') });
    if (name.endsWith('.exe')) return fail(415, 'unsupported_type', 'this kind of file is not taken: programs and unknown types are refused');
    const kind = name.endsWith('.md') ? 'markdown' : 'text';
    const created = doc(`doc_${uploaded.length}`, name, kind, { pool, size: bytes.length, pages: null, status: 'reading', created_at: '2026-12-06T09:00:00Z' });
    if (pool === 'shared') Object.assign(created, { uploaded_by: ADA, uploaded_by_name: 'Ada' });
    documents = [created, ...documents];
    return route.fulfill({ status: 201, json: created });
  }
  if (pathname === '/api/documents/search') {
    return route.fulfill({
      json: [{ document: 'doc_notes', name: 'notes.txt', pool: 'private', page: 2, snippet: 'the **cardamom** <img src=x> & **cardamom**', score: 3.5 }],
    });
  }
  const match = /^\/api\/documents\/([^/]+)(\/content|\/text)?$/.exec(pathname);
  const found = match && documents.find((d) => d.id === match[1]);
  if (!found) return fail(404, 'no_document', 'no such document');
  if (match[2] === '/content') {
    const [type, body] = contents.get(found.id);
    return route.fulfill({ status: 200, headers: { 'Content-Type': type, 'X-Content-Type-Options': 'nosniff' }, body });
  }
  if (match[2] === '/text') {
    const pages = texts.get(found.id) ?? [''];
    const page = Number(url.searchParams.get('page'));
    return route.fulfill({ json: { document: found.id, page, pages: pages.length, text: pages[page - 1] } });
  }
  if (request.method() === 'DELETE') {
    documents = documents.filter((d) => d.id !== found.id);
    return route.fulfill({ status: 204, body: '' });
  }
  if (found.status === 'reading' && --readingFor <= 0) Object.assign(found, { status: 'ready', pages: 1 });
  return route.fulfill({ json: found });
}

describe('the Files page', () => {
  const { page } = componentFixture(['components/skald-files/skald-files.ts', 'api/client.ts', 'state/route.ts'], () => ({ api }));

  /**
   * Mounts the page as the workspace does, and follows the address as the workspace does:
   * `#/files/<id>?page=<n>` becomes the element's document and page.
   */
  const show = (hash = '#/files') =>
    page.evaluate(
      async ({ me, hash }) => {
        const { ApiClient } = window.skald['api/client.ts'];
        const { parseRoute } = window.skald['state/route.ts'];
        const element = document.createElement('skald-files');
        element.login = { client: new ApiClient('token', { baseUrl: location.origin }), me: { user: { id: me, name: 'Ada' }, role: { manage_instance: false } } };
        const follow = () => {
          const route = parseRoute(location.hash);
          element.documentId = route.page === 'files' ? (route.document ?? null) : null;
          element.documentPage = route.page === 'files' ? (route.documentPage ?? 1) : 1;
        };
        history.replaceState(null, '', hash);
        follow();
        window.addEventListener('hashchange', follow);
        document.body.append(element);
        await element.updateComplete;
      },
      { me: ADA, hash },
    );
  /** axe's findings about the element, not about the bare test page around it (no <main>, no <h1>). */
  const axe = async () => (await axeViolationsInThemes(page)).filter((v) => !/: (landmark-one-main|page-has-heading-one|region) /.test(v));
  const row = (id) => page.locator(`[data-testid=file][data-id=${id}]`);
  const announced = () => page.locator('skald-files [role=status][aria-live=polite]').textContent();

  test('lists each document with its kind, size, pages, date and status in words; a shared one says who uploaded it', async () => {
    await show();
    await row('doc_rules').waitFor();
    assert.equal(await row('doc_notes').locator('[data-testid=file-open]').innerText(), 'notes.txt');
    assert.match(await row('doc_notes').locator('.facts').innerText(), /^Text · 2 KB · 2 pages · Dec 5, 2026/);
    assert.equal(await row('doc_notes').locator('[data-testid=file-status]').innerText(), 'Ready');
    assert.equal(
      await row('doc_scan').locator('[data-testid=file-status]').innerText(),
      'No text found — No text found: install OCR (tesseract) to read scanned pages.',
    );
    assert.equal(await row('doc_broken').locator('[data-testid=file-status]').innerText(), 'Failed — The file is damaged.');
    assert.doesNotMatch(await row('doc_broken').innerText(), /page/, 'no page count when none is known');
    assert.equal(await row('doc_rules').locator('[data-testid=file-shared]').innerText(), 'Shared');
    assert.match(await row('doc_rules').innerText(), /uploaded by Bea/);
    assert.equal(await row('doc_rules').locator('[data-testid=file-delete]').count(), 0, 'someone else’s shared file is theirs to delete');
    assert.equal(await row('doc_notes').locator('[data-testid=file-delete]').count(), 1);
    assert.equal(await page.locator('[data-testid=files-pool-private]').isChecked(), true, 'only me, unless chosen otherwise');
    assert.match(await page.locator('skald-files fieldset').innerText(), /Everyone \(shared\)\nEvery member and the administrator can read it\./);
    assert.deepEqual(await axe(), [], 'accessibility of the list');
  });

  test('files chosen go up one at a time into the pool chosen, each asked after until it is read', async () => {
    await show();
    await row('doc_notes').waitFor();
    await page.locator('[data-testid=files-pool-shared]').check();
    await page.locator('[data-testid=files-input]').setInputFiles([
      { name: 'plan.md', mimeType: 'text/markdown', buffer: Buffer.from('# Plan\n') },
      { name: 'list.txt', mimeType: 'text/plain', buffer: Buffer.from('eggs, flour') },
    ]);
    await row('doc_2').waitFor();
    assert.deepEqual(uploaded, [
      { name: 'plan.md', pool: 'shared', bytes: '# Plan\n' },
      { name: 'list.txt', pool: 'shared', bytes: 'eggs, flour' },
    ]);
    assert.match(await row('doc_2').innerText(), /uploaded by you/);
    await page.locator('[data-testid=file][data-id=doc_2][data-status=ready]').waitFor({ timeout: 5000 });
    await page.locator('[data-testid=file][data-id=doc_1][data-status=ready]').waitFor({ timeout: 5000 });
    assert.equal(await row('doc_2').locator('[data-testid=file-status]').innerText(), 'Ready');
    assert.match(await announced(), /is ready\.$/);
    const polls = requests.filter((r) => /^GET \/api\/documents\/doc_\d$/.test(r)).length;
    await page.waitForTimeout(1500);
    assert.equal(requests.filter((r) => /^GET \/api\/documents\/doc_\d$/.test(r)).length, polls, 'no more asking once both are read');
    assert.equal(await page.locator('[data-testid=upload]').count(), 0, 'done uploads leave the list of uploads');
  });

  test('files dropped on the page are uploaded; an empty, a too large and a refused one say why, and only the refused one was sent', async () => {
    await show();
    await row('doc_notes').waitFor();
    const drop = page.locator('[data-testid=files-drop]');
    const dragged = await page.evaluateHandle(() => {
      const transfer = new DataTransfer();
      transfer.items.add(new File(['milk'], 'shopping.txt', { type: 'text/plain' }));
      transfer.items.add(new File([], 'empty.txt'));
      transfer.items.add(new File([new Uint8Array(64 * 1024 * 1024 + 1)], 'huge.iso'));
      transfer.items.add(new File(['MZ'], 'setup.exe'));
      return transfer;
    });
    await drop.dispatchEvent('dragenter', { dataTransfer: dragged });
    assert.equal(await drop.getAttribute('data-dragging'), '', 'the drop zone shows while files are over the page');
    assert.match(await page.locator('skald-files .drop-overlay').innerText(), /Drop the files to upload them\n+Only you will be able to read them\./);
    await drop.dispatchEvent('drop', { dataTransfer: dragged });
    assert.equal(await drop.getAttribute('data-dragging'), null);
    await page.locator('[data-testid=upload][data-state=failed]').nth(2).waitFor();
    await row('doc_1').waitFor();
    const problems = await page.locator('[data-testid=upload-problem]').allInnerTexts();
    assert.deepEqual(problems, [
      'empty.txt was not uploaded. empty.txt is empty.',
      'huge.iso was not uploaded. huge.iso is 67 MB; the limit is 67 MB a file.',
      'setup.exe was not uploaded. This kind of file is not taken: programs and unknown types are refused.',
    ]);
    assert.deepEqual(
      uploaded.map((u) => u.name),
      ['shopping.txt', 'setup.exe'],
    );
    await page.locator('[data-testid=upload-dismiss]').first().click();
    assert.equal(await page.locator('[data-testid=upload]').count(), 2);
  });

  test('search marks what matched, shows everything else as text, and links each hit to its page', async () => {
    await show();
    await row('doc_notes').waitFor();
    await page.locator('[data-testid=files-search]').fill('cardamom');
    const hit = page.locator('[data-testid=file-hit]');
    await hit.waitFor();
    assert.deepEqual(requests.filter((r) => r.includes('search')), ['GET /api/documents/search?q=cardamom']);
    assert.equal(await hit.getAttribute('href'), '#/files/doc_notes?page=2');
    assert.deepEqual(await hit.locator('mark').allInnerTexts(), ['cardamom', 'cardamom']);
    assert.match(await hit.innerText(), /notes\.txt\npage 2\nthe cardamom <img src=x> & cardamom/);
    assert.equal(await hit.locator('img').count(), 0, 'markup in a snippet is text');
    assert.equal(await row('doc_notes').count(), 0, 'the hits stand in for the list');

    await hit.click();
    const text = page.locator('[data-testid=document-text]');
    await text.filter({ hasText: 'Second page of the notes.' }).waitFor();
    assert.equal(await page.locator('[data-testid=page-of]').innerText(), 'Page 2 of 2');
  });

  test('a text document reads a page at a time, as plain text, turned with Previous and Next', async () => {
    await show('#/files/doc_notes');
    const text = page.locator('[data-testid=document-text]');
    await text.waitFor();
    assert.equal(await text.textContent(), 'First page: <b>not bold</b> & kept as typed.');
    assert.equal(await page.locator('skald-document-view b').count(), 0, 'the text is never markup');
    assert.equal(await page.locator('[data-testid=page-previous]').isDisabled(), true);
    const focused = await page.evaluate(() => document.querySelector('skald-files').shadowRoot.querySelector('skald-document-view').shadowRoot.activeElement?.id);
    assert.equal(focused, 'document-heading', 'the document’s name takes focus');

    await page.locator('[data-testid=page-next]').focus();
    await page.keyboard.press('Enter');
    await text.filter({ hasText: 'Second page of the notes.' }).waitFor();
    assert.equal(await page.evaluate(() => location.hash), '#/files/doc_notes?page=2');
    assert.equal(await page.locator('[data-testid=page-next]').isDisabled(), true);
    const after = await page.evaluate(() => document.querySelector('skald-files').shadowRoot.querySelector('skald-document-view').shadowRoot.activeElement?.id);
    assert.equal(after, 'page-of', 'at the last page focus goes to the page number, not the top of the window');
    assert.deepEqual(
      requests.filter((r) => r.includes('/text')),
      ['GET /api/documents/doc_notes/text?page=1', 'GET /api/documents/doc_notes/text?page=2'],
    );
    assert.deepEqual(await axe(), [], 'accessibility of the viewer');

    await page.locator('[data-testid=document-back]').click();
    await row('doc_notes').waitFor();
    const back = await page.evaluate(() => document.querySelector('skald-files').shadowRoot.activeElement?.textContent);
    assert.equal(back, 'notes.txt', 'back in the list, the document left has the focus');
  });

  test('Markdown is rendered, its images left inert; a shared document says who can read it', async () => {
    await show('#/files/doc_rules');
    const markdown = page.locator('[data-testid=document-markdown]');
    await markdown.locator('h1').waitFor();
    assert.equal(await markdown.locator('h1').innerText(), 'House rules');
    assert.equal(await markdown.locator('strong').innerText(), 'off');
    assert.equal(await markdown.locator('img').count(), 0, 'an image in a document loads nothing');
    assert.match(await markdown.locator('skald-markdown .md').innerText(), /a tracker/);
    assert.match(await page.locator('[data-testid=document-shared]').innerText(), /^Shared — every member and the administrator can read this\.\s+uploaded by Bea$/);
    assert.equal(await page.locator('[data-testid=page-of]').count(), 0, 'Markdown is shown whole');
  });

  test('an image shows from a data: address, and downloads as it was uploaded', async () => {
    documents.push(doc('doc_photo', 'photo.png', 'png', { pages: null, size: PNG.length }));
    await show('#/files/doc_photo');
    const image = page.locator('[data-testid=document-image]');
    await image.waitFor();
    assert.match(await image.getAttribute('src'), /^data:image\/png;base64,/);
    await page.waitForFunction(() => document.querySelector('skald-files').shadowRoot.querySelector('skald-document-view').shadowRoot.querySelector('img')?.naturalWidth === 1);
    assert.equal(await image.getAttribute('alt'), 'The image photo.png');
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('[data-testid=document-download]').click()]);
    assert.equal(download.suggestedFilename(), 'photo.png');
  });

  test('a PDF is drawn by pdf.js, its words laid over it as selectable text, page by page', async () => {
    await show('#/files/doc_scan');
    const layer = page.locator('skald-document-view .textLayer');
    await layer.filter({ hasText: 'Café' }).waitFor({ timeout: 15_000 });
    assert.match(await layer.innerText(), /Café crème/);
    assert.equal(await page.locator('[data-testid=page-of]').innerText(), 'Page 1 of 2');
    const inked = () =>
      page.evaluate(() => {
        const canvas = document.querySelector('skald-files').shadowRoot.querySelector('skald-document-view').shadowRoot.querySelector('canvas');
        const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
        let dark = 0;
        for (let i = 0; i < data.length; i += 4) if (data[i] < 128 && data[i + 3] > 0) dark += 1;
        return dark;
      });
    assert.ok((await inked()) > 50, 'the page was drawn, its text in ink');
    assert.equal(await page.locator('[data-testid=document-status]').innerText(), 'No text found — No text found: install OCR (tesseract) to read scanned pages.');

    await page.locator('[data-testid=page-next]').click();
    await layer.filter({ hasText: 'second page' }).waitFor({ timeout: 15_000 });
    assert.equal(await page.locator('[data-testid=page-of]').innerText(), 'Page 2 of 2');
    assert.equal(await layer.filter({ hasText: 'Café' }).count(), 0, 'the first page’s words are gone');
    assert.deepEqual(requests.filter((r) => r.includes('/content')), ['GET /api/documents/doc_scan/content'], 'the bytes are read once');
  });

  test('delete asks first, then the document is gone from the list', async () => {
    await show();
    await row('doc_notes').locator('[data-testid=file-delete]').click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /Delete this file\?\n+“notes\.txt” will be gone for good, for you and for Skald\./);
    await page.locator('[data-testid=confirm-ok]').click();
    await row('doc_notes').waitFor({ state: 'detached' });
    assert.ok(requests.includes('DELETE /api/documents/doc_notes'));
    assert.equal(await announced(), 'notes.txt was deleted.');
  });

  test('a document that is not there says so, with the way back', async () => {
    await show('#/files/doc_nowhere');
    const gone = page.locator('[data-testid=document-gone]');
    await gone.waitFor();
    assert.match(await gone.innerText(), /This file is not here any more\./);
  });
});
