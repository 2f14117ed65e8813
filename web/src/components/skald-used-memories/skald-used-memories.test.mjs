// "Used N memories" under a reply, in Chromium: one quiet line, closed at first, that
// the keyboard opens to each memory's sentence as a link to the Memory page showing it;
// the count in the singular and the plural, in English and in French; nothing at all
// for a reply that used none.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { componentFixture, mount } from '../../../tests/mount.mjs';

const TEA = { id: 'mem_d7b496e085f4633fb9c1dffd', pool: 'private', text: 'Ada drinks green tea every morning.' };
const KETTLE = { id: 'mem_1c9f3f7871b0e13276eeaf9e', pool: 'shared', text: 'The kettle is in the left cupboard.' };

describe('the memories a reply used', () => {
  const { page } = componentFixture(['components/skald-used-memories/skald-used-memories.ts', 'i18n/locale.ts']);

  const summary = () => page.locator('[data-testid=used-memories-summary]');
  const links = () => page.locator('[data-testid=used-memory]');

  test('closed, it says how many; opened from the keyboard, each sentence links to the Memory page on that memory', async () => {
    await mount(page, '<skald-used-memories></skald-used-memories>', { memories: [TEA, KETTLE] });
    assert.equal((await summary().innerText()).trim(), 'Used 2 memories');
    assert.equal(await links().first().isVisible(), false, 'the sentences wait until asked for');
    await summary().focus();
    await page.keyboard.press('Enter');
    assert.deepEqual(await links().allInnerTexts(), [TEA.text, KETTLE.text]);
    assert.deepEqual(
      await links().evaluateAll((all) => all.map((a) => a.getAttribute('href'))),
      [`#/memories?focus=${TEA.id}`, `#/memories?focus=${KETTLE.id}`],
    );
    assert.match(await page.locator('skald-used-memories li').first().innerText(), /only you$/);
    assert.match(await page.locator('skald-used-memories li').nth(1).innerText(), /everyone here$/);
    // A link is reached with Tab, in the order the memories were named.
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.querySelector('skald-used-memories').shadowRoot.activeElement?.dataset.id), TEA.id);
  });

  test('one memory is said in the singular, and in the language in use', async () => {
    await mount(page, '<skald-used-memories></skald-used-memories>', { memories: [TEA] });
    assert.equal((await summary().innerText()).trim(), 'Used 1 memory');
    await page.evaluate(() => {
      const { useLocale, resolveLocale } = window.skald['i18n/locale.ts'];
      useLocale(resolveLocale('fr', []));
    });
    await mount(page, '<skald-used-memories></skald-used-memories>', { memories: [TEA, KETTLE] });
    assert.equal((await summary().innerText()).trim(), '2 souvenirs utilisés');
    await mount(page, '<skald-used-memories></skald-used-memories>', { memories: [TEA] });
    assert.equal((await summary().innerText()).trim(), '1 souvenir utilisé');
  });

  test('a reply that used no memory shows nothing', async () => {
    await mount(page, '<skald-used-memories></skald-used-memories>', { memories: [] });
    assert.equal(await page.locator('[data-testid=used-memories]').count(), 0);
    assert.equal(await page.evaluate(() => document.querySelector('skald-used-memories').shadowRoot.textContent.trim()), '');
  });
});
