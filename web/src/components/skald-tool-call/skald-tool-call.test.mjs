// A tool call in Chromium: its name in words and how it went, and — opened with the
// keyboard — the exact arguments and the result.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

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
