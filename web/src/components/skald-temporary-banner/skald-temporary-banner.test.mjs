// The banner above a temporary chat, in Chromium: a note (not an alert, not a control)
// that says what makes the chat temporary — nothing remembered or recalled, deleted when
// left — with its title set apart, in the language in use.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { componentFixture, mount } from '../../../tests/mount.mjs';

describe('the temporary chat banner', () => {
  const { page } = componentFixture(['components/skald-temporary-banner/skald-temporary-banner.ts', 'i18n/locale.ts']);
  const banner = () => page.locator('[data-testid=temporary-banner]');

  test('is a note that says nothing is remembered or recalled, and that leaving deletes it', async () => {
    await mount(page, '<skald-temporary-banner></skald-temporary-banner>');
    assert.equal(await banner().getAttribute('role'), 'note');
    assert.equal(
      (await banner().innerText()).trim(),
      'Temporary chat — nothing is remembered from it or recalled into it, and it is deleted when you leave it.',
    );
    assert.equal(await banner().locator('strong').innerText(), 'Temporary chat');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.querySelector('skald-temporary-banner').shadowRoot.activeElement), null, 'nothing in it takes the focus');
  });

  test('speaks the language in use', async () => {
    await page.evaluate(() => {
      const { useLocale, resolveLocale } = window.skald['i18n/locale.ts'];
      useLocale(resolveLocale('it', []));
    });
    await mount(page, '<skald-temporary-banner></skald-temporary-banner>');
    assert.match(await banner().innerText(), /^Conversazione temporanea — non se ne ricorda nulla/);
    assert.equal(await banner().locator('strong').innerText(), 'Conversazione temporanea');
  });
});
