// A message edited in place, as a person uses it in Chromium: the field opens with the
// message and the cursor at its end, Ctrl+Enter or Send sends the new words, Escape or
// Cancel leaves it as it was, and the same words are not sent again as a "new" version.
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { componentFixture, emitted, mount, recordEvents } from '../../../tests/mount.mjs';

describe('editing a message', () => {
  const { page } = componentFixture(['components/skald-message-edit/skald-message-edit.ts']);
  beforeEach(async () => {
    await mount(page, '<skald-message-edit text="Plan a trip to Lyon"></skald-message-edit>');
    await recordEvents(page, ['skald-resend', 'skald-edit-cancel']);
  });

  const field = () => page.locator('[data-testid=edit-field]');
  const send = () => page.locator('[data-testid=edit-send]');

  test('it opens with the message, focused at its end, and Ctrl+Enter sends the edit', async () => {
    assert.equal(await field().inputValue(), 'Plan a trip to Lyon');
    await page.keyboard.type(' and back');
    await page.keyboard.press('Control+Enter');
    assert.deepEqual(await emitted(page), [{ type: 'skald-resend', text: 'Plan a trip to Lyon and back' }]);
  });

  test('the same words are no new version: Send stays off until they change', async () => {
    assert.ok(await send().isDisabled());
    await page.keyboard.press('Control+Enter');
    await field().fill('   ');
    assert.ok(await send().isDisabled(), 'nothing to send');
    await field().fill('Plan a walk');
    await send().click();
    assert.deepEqual(await emitted(page), [{ type: 'skald-resend', text: 'Plan a walk' }]);
  });

  test('Escape and Cancel leave it as it was', async () => {
    await page.keyboard.type(' maybe');
    await page.keyboard.press('Escape');
    await page.locator('[data-testid=edit-cancel]').click();
    assert.deepEqual(await emitted(page), [{ type: 'skald-edit-cancel' }, { type: 'skald-edit-cancel' }]);
  });
});
