// The conversation list by when each was last used, in calendar days.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { loadModule } from './load.mjs';

describe('conversations by period', () => {
  let groupByPeriod;
  before(async () => {
    ({ groupByPeriod } = await loadModule('state/session-groups.ts'));
  });

  const at = (id, date) => ({ id, updated_at: date.toISOString() });
  const local = (y, m, d, h = 12, min = 0) => new Date(y, m - 1, d, h, min);

  test('groups by calendar day, newest first, leaving out empty periods', () => {
    const now = local(2026, 12, 2, 0, 10);
    const groups = groupByPeriod(
      [
        at('late-last-night', local(2026, 12, 1, 23, 50)),
        at('this-morning', local(2026, 12, 2, 0, 5)),
        at('last-week', local(2026, 11, 27)),
        at('long-ago', local(2025, 1, 1)),
        at('just-now', local(2026, 12, 2, 0, 9)),
      ],
      now,
    );
    assert.deepEqual(
      groups.map((g) => [g.period, g.sessions.map((s) => s.id)]),
      [
        ['today', ['just-now', 'this-morning']],
        ['yesterday', ['late-last-night']],
        ['week', ['last-week']],
        ['older', ['long-ago']],
      ],
    );
  });

  test('nothing to group gives no groups', () => {
    assert.deepEqual(groupByPeriod([], new Date()), []);
  });
});
