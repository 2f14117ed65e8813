// A search typed into a field (state/debounced-search.ts): it runs once typing pauses,
// with the words trimmed; only the latest words' answer lands; clearing the field, or
// words shorter than asked, means no search; refresh runs it again at once; cancel drops
// what is to come. The clock is node's mock timers, so nothing here waits for real.
import { afterEach, before, beforeEach, describe, mock, test } from 'node:test';
import assert from 'node:assert/strict';

import { loadModule } from './load.mjs';

let DebouncedSearch;

before(async () => {
  ({ DebouncedSearch } = await loadModule('state/debounced-search.ts'));
});

/** A promise the test settles itself. */
function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets the promises already settled run their callbacks. */
const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('a debounced search', () => {
  let asked;
  let answers;
  let results;
  let errors;
  let search;

  const make = (options = {}) =>
    new DebouncedSearch({
      delayMs: 250,
      run: (query) => {
        asked.push(query);
        const answer = deferred();
        answers.push(answer);
        return answer.promise;
      },
      onResults: (value, query) => results.push([value, query]),
      onError: (error, query) => errors.push([error.message, query]),
      ...options,
    });

  beforeEach(() => {
    mock.timers.enable({ apis: ['setTimeout'] });
    asked = [];
    answers = [];
    results = [];
    errors = [];
    search = make();
  });

  afterEach(() => mock.timers.reset());

  test('runs once typing pauses, for the last words typed, trimmed', async () => {
    search.input('c');
    mock.timers.tick(100);
    search.input('ca');
    mock.timers.tick(100);
    search.input(' cat ');
    mock.timers.tick(249);
    assert.deepEqual(asked, [], 'not while the typing goes on');
    mock.timers.tick(1);
    assert.deepEqual(asked, ['cat']);
    assert.equal(search.query, 'cat');
    answers[0].resolve(['hit']);
    await flush();
    assert.deepEqual(results, [[['hit'], 'cat']]);
  });

  test('an answer to words typed over is dropped; the answer to the latest lands', async () => {
    search.input('cat');
    mock.timers.tick(250);
    search.input('cats');
    mock.timers.tick(250);
    assert.deepEqual(asked, ['cat', 'cats']);
    answers[1].resolve(['cats hit']);
    answers[0].resolve(['cat hit']);
    await flush();
    assert.deepEqual(results, [[['cats hit'], 'cats']]);
  });

  test('an answer arriving after the words were typed over, before the next search runs, is dropped', async () => {
    search.input('cat');
    mock.timers.tick(250);
    search.input('cats');
    answers[0].resolve(['cat hit']);
    await flush();
    assert.deepEqual(results, [], 'the field says cats now');
  });

  test('clearing the field is no search: no results at once, and the one under way is dropped', async () => {
    search.input('cat');
    mock.timers.tick(250);
    search.input('   ');
    assert.deepEqual(results, [[null, '']]);
    assert.equal(search.query, '');
    answers[0].resolve(['late']);
    mock.timers.tick(1000);
    await flush();
    assert.deepEqual(results, [[null, '']]);
    assert.deepEqual(asked, ['cat'], 'nothing is asked for blank words');
  });

  test('words shorter than asked for are no search', async () => {
    search = make({ minChars: 2 });
    search.input('c');
    mock.timers.tick(1000);
    assert.deepEqual(asked, []);
    assert.deepEqual(results, [[null, 'c']]);
    search.input('ca');
    mock.timers.tick(250);
    assert.deepEqual(asked, ['ca']);
  });

  test('a failure of the latest search is told; one of words typed over is not', async () => {
    search.input('cat');
    mock.timers.tick(250);
    search.input('dog');
    mock.timers.tick(250);
    answers[0].reject(new Error('old failure'));
    answers[1].reject(new Error('server down'));
    await flush();
    assert.deepEqual(errors, [['server down', 'dog']]);
    assert.deepEqual(results, []);
  });

  test('refresh runs the search in effect at once, and nothing without one', async () => {
    await search.refresh();
    assert.deepEqual(asked, []);
    search.input('cat');
    const refreshed = search.refresh();
    assert.deepEqual(asked, ['cat'], 'without waiting for the pause');
    answers[0].resolve(['again']);
    await refreshed;
    mock.timers.tick(1000);
    assert.deepEqual(asked, ['cat'], 'the waiting run was replaced, not run twice');
    assert.deepEqual(results, [[['again'], 'cat']]);
  });

  test('cancel forgets the search waiting and drops the answer under way', async () => {
    search.input('cat');
    mock.timers.tick(250);
    search.input('cats');
    search.cancel();
    mock.timers.tick(1000);
    answers[0].resolve(['late']);
    await flush();
    assert.deepEqual(asked, ['cat']);
    assert.deepEqual(results, []);
  });
});
