// A built-in tool's call in words: every argument that changes what happens is in the
// sentence, in full where it matters (an address), and unknown tools get none.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { loadModule } from './load.mjs';

describe('a call in words', () => {
  let describeCall;
  before(async () => {
    ({ describeCall } = await loadModule('i18n/tool-sentences.ts'));
  });

  test('a note to write names its title and its text', () => {
    assert.equal(describeCall('note_write', { title: 'Shopping', text: 'flour, yeast' }), 'Save a note titled “Shopping”: flour, yeast');
    assert.equal(describeCall('note_write', { id: 7, title: 'Shopping', text: 'milk' }), 'Replace note 7 with one titled “Shopping”: milk');
  });

  test('a web address is never shortened, however long', () => {
    const url = `https://example.org/${'a'.repeat(400)}?next=https://elsewhere.example/`;
    assert.equal(describeCall('web_fetch', { url }), `Read the web page ${url}`);
  });

  test('long free text is cut on a word with an ellipsis, and its line breaks read as spaces', () => {
    const text = `${'word '.repeat(60)}end`;
    const sentence = describeCall('note_write', { title: 'T', text: `line one\nline two ${text}` });
    assert.match(sentence, /^Save a note titled “T”: line one line two word/);
    assert.ok(sentence.endsWith('…') && !sentence.includes('\n'), sentence);
    assert.ok(sentence.length < 220, `${sentence.length} characters`);
  });

  test('arguments sent as JSON text read the same as an object', () => {
    assert.equal(describeCall('note_delete', '{"id": 3}'), 'Delete note 3');
    assert.equal(describeCall('note_search', { query: 'bread' }), 'Search your notes for “bread”');
    assert.equal(describeCall('call_agent', { agent: 'researcher', task: 'Find the bus times' }), 'Ask the agent researcher: Find the bus times');
    assert.equal(describeCall('notify', { title: 'Oven', body: 'Take the bread out' }), 'Send you a notification: “Oven” — Take the bread out');
  });

  test('memories: the sentence to keep in full, what is looked for, the memory erased', () => {
    assert.equal(describeCall('remember', { text: 'Ada takes her tea with lemon.', pool: 'private', subject: { kind: 'self' } }), 'Remember “Ada takes her tea with lemon.”');
    assert.equal(describeCall('recall', { query: 'tea' }), 'Look through what is kept for “tea”');
    assert.equal(describeCall('forget', { id: 'mem_1' }), 'Erase the memory mem_1');
    assert.equal(describeCall('forget', { id: 1 }), null);
  });

  test('documents: what is searched for in full, which pages are read as the tool reads them', () => {
    assert.equal(describeCall('document_search', { query: 'boiler warranty' }), 'Search your documents for “boiler warranty”');
    assert.equal(describeCall('document_search', '{"query": "lease", "limit": 3}'), 'Search your documents for “lease”');
    const id = 'doc_0123456789abcdef01234567';
    assert.equal(describeCall('document_read', { document: id }), 'Read a document');
    assert.equal(describeCall('document_read', { document: id, pages: '  ' }), 'Read a document');
    // A number, not text: the tool reads every page, and the sentence says so.
    assert.equal(describeCall('document_read', { document: id, pages: 3 }), 'Read a document');
    assert.equal(describeCall('document_read', { document: id, pages: '3' }), 'Read page 3 of a document');
    assert.equal(describeCall('document_read', { document: id, pages: '2-5' }), 'Read pages 2–5 of a document');
    assert.equal(describeCall('document_read', { document: id, pages: '2 – 5' }), 'Read pages 2–5 of a document');
    assert.equal(describeCall('document_read', { document: id, pages: '4-4' }), 'Read page 4 of a document');
    assert.equal(describeCall('document_read', { document: id, pages: '6-' }), 'Read a document from page 6 on');
  });

  test('document pages the tool refuses, or no document named, get no sentence', () => {
    const id = 'doc_0123456789abcdef01234567';
    assert.equal(describeCall('document_read', { pages: '2' }), null);
    assert.equal(describeCall('document_read', { document: id, pages: '0' }), null);
    assert.equal(describeCall('document_read', { document: id, pages: '5-2' }), null);
    assert.equal(describeCall('document_read', { document: id, pages: 'two' }), null);
    assert.equal(describeCall('document_search', { limit: 3 }), null);
  });

  test('a picture to make quotes its description, cut when long, and names a size asked for', () => {
    assert.equal(describeCall('image_generate', { prompt: 'A fox in the snow' }), 'Make a picture: “A fox in the snow”');
    assert.equal(describeCall('image_generate', { prompt: 'A fox', size: '512x512' }), 'Make a 512x512 picture: “A fox”');
    const long = describeCall('image_generate', { prompt: `A fox\n${'in deep snow '.repeat(40)}` });
    assert.match(long, /^Make a picture: “A fox in deep snow/);
    assert.ok(long.endsWith('…”') && !long.includes('\n'), long);
    assert.equal(describeCall('image_generate', { size: '512x512' }), null);
  });

  test('an unknown tool, or arguments that do not fit, get no sentence: the card shows them as they are', () => {
    assert.equal(describeCall('mcp__files__write', { path: '/etc/passwd' }), null);
    assert.equal(describeCall('web_fetch', { address: 'https://example.org' }), null);
    assert.equal(describeCall('note_delete', 'not json'), null);
    assert.equal(describeCall('note_delete', { id: 'three' }), null);
  });
});
