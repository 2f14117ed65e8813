// The confirmation dialog in Chromium: Cancel has the focus, Escape cancels, and for the
// gravest deletions the action waits until the name is typed exactly.
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { componentFixture, mount } from '../../../tests/mount.mjs';

describe('the confirmation dialog', () => {
  const { page } = componentFixture(['components/skald-confirm/skald-confirm.ts']);
  beforeEach(async () => {
    await mount(page, '<skald-confirm></skald-confirm>');
  });

  /** Asks, as a page does; `answer()` is then what the person chose, or undefined while they have not. */
  const ask = async (request) => {
    await page.evaluate((request) => {
      window.answer = undefined;
      void document.querySelector('skald-confirm').ask(request).then((confirmed) => (window.answer = confirmed));
    }, request);
    await page.getByRole('dialog').waitFor();
  };
  const answer = async () => {
    // The promise settles a microtask after the click; a dialog left open never settles.
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 0)));
    return page.evaluate(() => window.answer);
  };
  const ok = () => page.locator('[data-testid=confirm-ok]');

  test('Cancel has the focus, so Enter at once cancels; the action confirms', async () => {
    await ask({ title: 'Delete "Shopping"?', body: 'The note is gone for good.', action: 'Delete' });
    assert.equal(await page.getByRole('dialog').getByRole('heading').textContent(), 'Delete "Shopping"?');
    await page.keyboard.press('Enter');
    assert.equal(await answer(), false);
    assert.equal(await page.getByRole('dialog').count(), 0, 'the dialog closed');

    await ask({ title: 'Delete "Shopping"?', body: 'The note is gone for good.', action: 'Delete' });
    await ok().click();
    assert.equal(await answer(), true);
  });

  test('Escape cancels', async () => {
    await ask({ title: 'Remove the provider?', body: 'Its models go with it.', action: 'Remove' });
    await page.keyboard.press('Escape');
    assert.equal(await answer(), false);
  });

  test('a typed confirmation waits for exactly the name, and then Enter confirms', async () => {
    await ask({ title: 'Delete Bea?', body: 'Everything of Bea goes.', action: 'Delete', typed: 'Bea' });
    assert.ok(await ok().isDisabled());
    await page.keyboard.press('Enter');
    assert.equal(await page.getByRole('dialog').count(), 1, 'a stray Enter in the empty field deletes nothing');
    await page.keyboard.type('bea');
    assert.ok(await ok().isDisabled(), 'the name exactly, not near it');
    await page.keyboard.press('Enter');
    assert.equal(await page.getByRole('dialog').count(), 1);
    await page.keyboard.press('Backspace');
    await page.keyboard.press('Backspace');
    await page.keyboard.press('Backspace');
    await page.keyboard.type('Bea');
    assert.ok(await ok().isEnabled());
    await page.keyboard.press('Enter');
    assert.equal(await answer(), true);
  });
});
