// The page's words name only what exists: no feature that is not built yet, and the
// places it points to by the names the page shows them under.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { loadModule } from './load.mjs';

/**
 * What a string may not promise yet, each with why. A feature's issue removes its line
 * when the feature lands.
 */
const NOT_YET = [
  [/Settings → /, 'there is no Settings page: it is Administration → …'],
];

describe('the strings of the page', () => {
  let strings;
  before(async () => {
    ({ strings } = await loadModule('i18n/en.ts'));
  });

  test('promise nothing that does not exist', () => {
    const found = [];
    for (const [key, value] of Object.entries(strings)) {
      // A count's sentence is a set of plural forms: each of them is read.
      for (const text of typeof value === 'string' ? [value] : Object.values(value)) {
        for (const [pattern, why] of NOT_YET) {
          if (pattern.test(text)) found.push(`${key}: "${text}" — ${why}`);
        }
      }
    }
    assert.deepEqual(found, []);
  });

  test('the check itself catches a promise', () => {
    assert.ok(NOT_YET.some(([pattern]) => pattern.test('Open Settings → Models.')));
    assert.ok(!NOT_YET.some(([pattern]) => pattern.test('Open Administration → Models.')));
  });
});
