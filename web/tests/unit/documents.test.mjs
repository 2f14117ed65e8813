// The pure logic behind the Files page: which view a document opens in, its kind and status
// in words, the page shown, what an upload refused says, the addresses of a document and
// its pages, search snippets (markup in them stays text), the ReadableStream iterator
// pdf.js needs where the engine lacks it, and the hand-written PDF the browser tests use.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { tinyPdf } from '../e2e/pdf.mjs';
import { loadModules } from './load.mjs';

let documents;
let client;
let route;
let notes;
let streams;

before(async () => {
  ({ documents, client, route, notes, streams } = await loadModules({
    documents: 'state/documents.ts',
    client: 'api/client.ts',
    route: 'state/route.ts',
    notes: 'state/notes.ts',
    streams: 'pdf/stream-iterator.ts',
  }));
});

const doc = (extra) => ({ name: 'report.pdf', kind: 'pdf', size: 1000, status: 'ready', status_detail: null, ...extra });

describe('a document in words', () => {
  test('its status: reading, ready, and no text or failed with the server’s reason', () => {
    assert.equal(documents.statusSentence(doc({ status: 'reading' })), 'Reading…');
    assert.equal(documents.statusSentence(doc({ status: 'ready' })), 'Ready');
    assert.equal(
      documents.statusSentence(doc({ status: 'no_text', status_detail: 'No text found: install OCR (tesseract) to read scanned pages.' })),
      'No text found — No text found: install OCR (tesseract) to read scanned pages.',
    );
    assert.equal(documents.statusSentence(doc({ status: 'failed', status_detail: 'The file is damaged.' })), 'Failed — The file is damaged.');
    assert.equal(documents.statusSentence(doc({ status: 'failed', status_detail: '  ' })), 'Failed', 'no dash before nothing');
    assert.equal(documents.statusSentence(doc({ status: 'no_text' })), 'No text found');
  });

  test('a reading that ended is announced by name; one still under way is not', () => {
    assert.equal(documents.statusAnnouncement(doc({ status: 'reading' })), null);
    assert.equal(documents.statusAnnouncement(doc({ status: 'ready' })), 'report.pdf is ready.');
    assert.equal(documents.statusAnnouncement(doc({ status: 'no_text' })), 'No text found in report.pdf.');
    assert.equal(documents.statusAnnouncement(doc({ status: 'failed' })), 'report.pdf could not be read.');
  });

  test('its kind by the format’s own name', () => {
    assert.deepEqual(['pdf', 'docx', 'text', 'markdown', 'webp', 'epub'].map(documents.kindLabel), ['PDF', 'DOCX', 'Text', 'Markdown', 'WebP', 'EPUB']);
  });
});

describe('how a document is shown', () => {
  test('PDFs by pdf.js, images as images, Markdown rendered, everything else as its extracted text', () => {
    const view = (kind, size = 1000) => documents.viewOf({ kind, size });
    assert.equal(view('pdf'), 'pdf');
    for (const kind of ['png', 'jpeg', 'webp', 'gif']) assert.equal(view(kind), 'image', kind);
    assert.equal(view('markdown'), 'markdown');
    for (const kind of ['text', 'csv', 'html', 'docx', 'xlsx', 'pptx', 'odt', 'epub']) assert.equal(view(kind), 'text', kind);
  });

  test('HTML is never rendered, and a Markdown file too large to render at once is read as text', () => {
    assert.equal(documents.viewOf({ kind: 'html', size: 10 }), 'text');
    assert.equal(documents.viewOf({ kind: 'markdown', size: documents.MARKDOWN_WHOLE_BYTES }), 'markdown');
    assert.equal(documents.viewOf({ kind: 'markdown', size: documents.MARKDOWN_WHOLE_BYTES + 1 }), 'text');
  });

  test('an image’s data: address takes its type from the kind alone, and only an image kind has one', () => {
    assert.equal(documents.imageType('png'), 'image/png');
    assert.equal(documents.imageType('jpeg'), 'image/jpeg');
    assert.equal(documents.imageType('html'), null);
    assert.equal(documents.imageType('pdf'), null);
  });

  test('the page shown stays within the document; an unknown count takes the page asked', () => {
    assert.equal(documents.pageToShow(3, 10), 3);
    assert.equal(documents.pageToShow(12, 10), 10);
    assert.equal(documents.pageToShow(0, 10), 1);
    assert.equal(documents.pageToShow(2.5, 10), 1);
    assert.equal(documents.pageToShow(7, null), 7);
  });
});

describe('uploads', () => {
  const MAX = 64 * 1024 * 1024;

  test('an empty or too large file is refused before its bytes leave, with the limit', () => {
    assert.equal(documents.MAX_DOCUMENT_BYTES, MAX);
    assert.equal(documents.uploadRefusal({ name: 'a.txt', size: 1 }), null);
    assert.equal(documents.uploadRefusal({ name: 'a.txt', size: MAX }), null);
    assert.equal(documents.uploadRefusal({ name: 'a.txt', size: 0 }), 'a.txt is empty.');
    assert.equal(documents.uploadRefusal({ name: 'film.mkv', size: 700_000_000 }), 'film.mkv is 700 MB; the limit is 67 MB a file.');
  });

  test('the server’s refusal is said in its words; a 413, with or without words, says the limit', () => {
    const duplicate = new client.ApiError('duplicate_document', 'this file is already here, as “taxes 2026.pdf”', 409);
    assert.equal(documents.uploadFailure(duplicate, 'taxes.pdf'), 'This file is already here, as “taxes 2026.pdf”.');
    const bare = new client.ApiError('http_413', 'The server answered 413 Payload Too Large', 413);
    assert.equal(documents.uploadFailure(bare, 'big.pdf'), 'big.pdf is too large: the limit is 67 MB a file.');
    const worded = new client.ApiError('too_large', 'the file is larger than 64 MiB', 413);
    assert.equal(documents.uploadFailure(worded, 'big.pdf'), 'big.pdf is too large: the limit is 67 MB a file.');
  });

  test('progress is whole percent, never past 100, nothing for an unknown total', () => {
    assert.equal(documents.uploadPercent(0, 200), 0);
    assert.equal(documents.uploadPercent(199, 200), 99);
    assert.equal(documents.uploadPercent(250, 200), 100);
    assert.equal(documents.uploadPercent(10, 0), 0);
  });
});

describe('the address of a document', () => {
  test('the list, a document and a page of it parse and print back', () => {
    for (const hash of ['#/files', '#/files/doc_3f9c0a', '#/files/doc_3f9c0a?page=12']) {
      assert.equal(route.routeHash(route.parseRoute(hash)), hash);
    }
    assert.deepEqual(route.parseRoute('#/files/doc_1?page=4'), { page: 'files', document: 'doc_1', documentPage: 4 });
    assert.equal(route.documentLink('doc_1', 2), '#/files/doc_1?page=2');
    assert.equal(route.documentLink('doc_1'), '#/files/doc_1');
    assert.deepEqual(route.withoutFocus({ page: 'files', document: 'doc_1', documentPage: 2 }), { page: 'files', document: 'doc_1', documentPage: 2 }, 'kept: Back steps through pages');
  });

  test('anything but an id and a page number is left out', () => {
    assert.deepEqual(route.parseRoute('#/files/..%2Fetc'), { page: 'files' });
    assert.deepEqual(route.parseRoute('#/files/tax%20return.pdf'), { page: 'files' }, 'a file name is no id');
    for (const page of ['0', '-1', 'two', '1.5', '9999999999']) {
      assert.deepEqual(route.parseRoute(`#/files/doc_1?page=${page}`), { page: 'files', document: 'doc_1' }, page);
    }
  });
});

describe('search snippets', () => {
  test('the matches are marked; markup around them is text, to be escaped by the template', () => {
    assert.deepEqual(notes.snippetParts('a <img src=x onerror=alert(1)> **tax** & **2026**'), [
      { text: 'a <img src=x onerror=alert(1)> ', match: false },
      { text: 'tax', match: true },
      { text: ' & ', match: false },
      { text: '2026', match: true },
    ]);
  });
});

describe('for await over a stream where the engine lacks it', () => {
  /** A stream-like prototype without an iterator: chunks, and what was cancelled or released. */
  function fakeStreams() {
    const log = [];
    const proto = {
      getReader() {
        const chunks = [...this.chunks];
        return {
          read: async () => (chunks.length > 0 ? { done: false, value: chunks.shift() } : { done: true, value: undefined }),
          cancel: async () => log.push('cancel'),
          releaseLock: () => log.push('release'),
        };
      },
    };
    return { proto, log, stream: (chunks) => Object.assign(Object.create(proto), { chunks }) };
  }

  test('is added only where it is missing', () => {
    const { proto } = fakeStreams();
    assert.equal(streams.installStreamIterator(proto), true);
    assert.equal(typeof proto[Symbol.asyncIterator], 'function');
    assert.equal(streams.installStreamIterator(proto), false, 'once there, left alone');
    const own = { [Symbol.asyncIterator]() {} };
    const before = own[Symbol.asyncIterator];
    assert.equal(streams.installStreamIterator(own), false);
    assert.equal(own[Symbol.asyncIterator], before, 'an engine’s own iterator is kept');
  });

  test('reads every chunk in turn and releases the lock at the end', async () => {
    const { proto, log, stream } = fakeStreams();
    streams.installStreamIterator(proto);
    const seen = [];
    for await (const chunk of stream(['a', 'b', 'c'])) seen.push(chunk);
    assert.deepEqual(seen, ['a', 'b', 'c']);
    assert.deepEqual(log, ['release']);
  });

  test('leaving the loop early cancels the stream, unless asked not to', async () => {
    const { proto, log, stream } = fakeStreams();
    streams.installStreamIterator(proto);
    for await (const chunk of stream(['a', 'b'])) if (chunk === 'a') break;
    assert.deepEqual(log, ['cancel', 'release']);
    log.length = 0;
    for await (const chunk of stream(['a', 'b']).values({ preventCancel: true })) if (chunk === 'a') break;
    assert.deepEqual(log, ['release']);
  });
});

describe('the PDF the browser tests upload', () => {
  test('has a cross-reference entry pointing at each of its objects, and its text in Latin-1', () => {
    const pdf = tinyPdf(['Café crème', 'second page']);
    const text = pdf.toString('latin1');
    assert.ok(text.startsWith('%PDF-1.4\n'));
    const startxref = Number(/startxref\n(\d+)\n%%EOF\n$/.exec(text)[1]);
    assert.equal(text.slice(startxref, startxref + 5), 'xref\n');
    const offsets = [...text.matchAll(/^(\d{10}) 00000 n $/gm)].map((m) => Number(m[1]));
    assert.equal(offsets.length, 7, 'catalog, page tree, font, and a page with its contents for each of two pages');
    offsets.forEach((offset, i) => assert.ok(text.startsWith(`${i + 1} 0 obj\n`, offset), `object ${i + 1}`));
    assert.match(text, /\(Caf\\351 cr\\350me\) Tj/);
    assert.match(text, /\/Count 2/);
  });
});
