// The Memory page's pure logic: whom a memory is about as one key (a shared memory about
// its owner is "you", as one kept privately about yourself), the list narrowed by pool and
// subject, and the count "Erase everything about …" names.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { loadModule } from './load.mjs';

const ME = 'user_me';
let memories;

const memory = (id, pool, subject) => ({ id, text: id, pool, subject });
const LIST = [
  memory('a', 'private', { kind: 'self' }),
  memory('b', 'shared', { kind: 'member', id: ME }),
  memory('c', 'shared', { kind: 'member', id: 'user_bea' }),
  memory('d', 'shared', { kind: 'instance' }),
  memory('e', 'private', { kind: 'member', id: 'user_bea' }),
];

before(async () => {
  memories = await loadModule('state/memories.ts');
});

describe('memories on the page', () => {
  test('a subject is self, instance or a member id; a shared one about its owner is self', () => {
    assert.equal(memories.subjectKey({ kind: 'self' }, ME), 'self');
    assert.equal(memories.subjectKey({ kind: 'member', id: ME }, ME), 'self');
    assert.equal(memories.subjectKey({ kind: 'member', id: 'user_bea' }, ME), 'user_bea');
    assert.equal(memories.subjectKey({ kind: 'instance' }, ME), 'instance');
    assert.deepEqual(memories.subjectOfKey('self'), { kind: 'self' });
    assert.deepEqual(memories.subjectOfKey('instance'), { kind: 'instance' });
    assert.deepEqual(memories.subjectOfKey('user_bea'), { kind: 'member', id: 'user_bea' });
  });

  test('the subjects offered: you first, then this home, then the others, each once', () => {
    assert.deepEqual(memories.subjectKeys([...LIST].reverse(), ME), ['self', 'instance', 'user_bea']);
    assert.deepEqual(memories.subjectKeys([], ME), []);
  });

  test('the list narrows by pool and by subject, and counts what is about someone', () => {
    const ids = (list) => list.map((m) => m.id);
    assert.deepEqual(ids(memories.filterMemories(LIST, { pool: '', subject: '' }, ME)), ['a', 'b', 'c', 'd', 'e']);
    assert.deepEqual(ids(memories.filterMemories(LIST, { pool: 'shared', subject: '' }, ME)), ['b', 'c', 'd']);
    assert.deepEqual(ids(memories.filterMemories(LIST, { pool: '', subject: 'self' }, ME)), ['a', 'b']);
    assert.deepEqual(ids(memories.filterMemories(LIST, { pool: 'private', subject: 'user_bea' }, ME)), ['e']);
    assert.equal(memories.countAbout(LIST, 'user_bea', ME), 2);
    assert.equal(memories.countAbout(LIST, 'nobody', ME), 0);
  });
});
