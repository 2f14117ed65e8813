// Which memories a turn used, read from its recall results: one memory a line as the
// server writes them, the "nothing remembered" line naming none, several recalls of one
// turn each memory once; and which recall calls the "used memories" line stands for.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { loadModule } from './load.mjs';

let recall;

before(async () => {
  recall = await loadModule('state/recall.ts');
});

const tool = (id, result, extra = {}) => ({ kind: 'tool', id, name: 'recall', arguments: '{"query":"tea"}', status: 'ok', result, ...extra });

describe('a recall result', () => {
  test('names one memory a line: its id, its pool and its sentence, in order', () => {
    const result =
      'mem_d7b496e085f4633fb9c1dffd (private): Ada drinks green tea every morning.\n' +
      'mem_1c9f3f7871b0e13276eeaf9e (shared): The kettle is in the morning cupboard: left (private): of the sink.';
    assert.deepEqual(recall.parseRecall(result), [
      { id: 'mem_d7b496e085f4633fb9c1dffd', pool: 'private', text: 'Ada drinks green tea every morning.' },
      { id: 'mem_1c9f3f7871b0e13276eeaf9e', pool: 'shared', text: 'The kettle is in the morning cupboard: left (private): of the sink.' },
    ]);
  });

  test('"nothing remembered" names none, nor does a line in another shape', () => {
    assert.deepEqual(recall.parseRecall('nothing remembered matches "tea"'), []);
    assert.deepEqual(recall.parseRecall(''), []);
    assert.deepEqual(
      recall.parseRecall('mem_1 (secret): not a pool\nnote_4 (private): not a memory\nmem_2 (shared):\nmem_3 (private) missing colon'),
      [],
    );
  });

  test('as a JSON string, or with Windows line ends and stray spaces, it reads the same', () => {
    const expected = [
      { id: 'mem_a', pool: 'private', text: 'One.' },
      { id: 'mem_b', pool: 'shared', text: 'Two.' },
    ];
    assert.deepEqual(recall.parseRecall(JSON.stringify('mem_a (private): One.\nmem_b (shared): Two.')), expected);
    assert.deepEqual(recall.parseRecall('  mem_a (private): One.  \r\nmem_b (shared): Two.\r\n'), expected);
  });
});

describe('the memories a turn used', () => {
  test('every finished recall counts, each memory once, in the order first named', () => {
    const items = [
      tool('call_auto', 'mem_a (private): One.\nmem_b (shared): Two.'),
      { kind: 'text', text: 'Let me look again.' },
      tool('call_model', 'mem_b (shared): Two.\nmem_c (private): Three.'),
      tool('call_none', 'nothing remembered matches "x"'),
    ];
    assert.deepEqual(
      recall.usedMemories(items).map((m) => m.id),
      ['mem_a', 'mem_b', 'mem_c'],
    );
  });

  test('a recall still running, failed or refused, and another tool\'s result, count for nothing', () => {
    const items = [
      tool('call_1', null, { status: 'running' }),
      tool('call_2', 'mem_a (private): One.', { status: 'error' }),
      tool('call_3', 'mem_b (private): Two.', { status: 'denied' }),
      { kind: 'tool', id: 'call_4', name: 'note_read', arguments: '{}', status: 'ok', result: 'mem_c (private): Three.' },
    ];
    assert.deepEqual(recall.usedMemories(items), []);
  });

  test('the line stands for a recall that found something or is running; the others keep their row', () => {
    assert.equal(recall.summarisedRecall(tool('c', 'mem_a (private): One.'), true), true);
    assert.equal(recall.summarisedRecall(tool('c', null, { status: 'running' }), false), true);
    assert.equal(recall.summarisedRecall(tool('c', null, { status: 'running' }), true), false, 'cut off with its turn');
    assert.equal(recall.summarisedRecall(tool('c', 'nothing remembered matches "x"'), true), false);
    assert.equal(recall.summarisedRecall(tool('c', 'mem_a (private): One.', { status: 'error' }), true), false);
    assert.equal(recall.summarisedRecall(tool('c', null, { status: 'denied' }), true), false);
    assert.equal(recall.summarisedRecall({ ...tool('c', 'mem_a (private): One.'), name: 'note_search' }, true), false);
  });
});
