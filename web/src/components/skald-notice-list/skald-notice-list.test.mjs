// The notices of supervision (§6.2) in Chromium: a request and an end, each in a sentence
// that names the supervisor and who asked or ended it, and a link to the privacy page,
// where a request is answered and a new key made.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { componentFixture } from '../../../tests/mount.mjs';

const notice = (id, kind, body) => ({ id, kind, body, created_at: '2026-12-05T14:00:00Z', holds: false });

describe('the notices of supervision', () => {
  const { page } = componentFixture(['components/skald-notice-list/skald-notice-list.ts']);

  const show = (notices) =>
    page.evaluate(async (notices) => {
      const element = document.createElement('skald-notice-list');
      element.login = { notices: Object.assign(new EventTarget(), { notices }) };
      document.body.append(element);
      await element.updateComplete;
    }, notices);
  const sentence = (kind) => page.locator(`[data-testid=notice][data-kind=${kind}] .sentence`).innerText();

  test('a request names the supervisor and who asked, and links to where it is answered', async () => {
    await show([
      notice(1, 'supervision_requested', { edge: 'sup_1', supervisor: 'Ada', by: 'Bo' }),
      notice(2, 'supervision_requested', { edge: 'sup_2', supervisor: 'Ada', by: 'Ada' }),
    ]);
    const said = await page.locator('[data-testid=notice] .sentence').allInnerTexts();
    assert.deepEqual(said, [
      'Bo asked that Ada be able to open your space. Nothing is open to Ada until you accept.',
      'Ada asks to be able to open your space. Nothing is open to them until you accept.',
    ]);
    const link = page.locator('[data-testid=notice]').first().getByRole('link');
    assert.equal(await link.getAttribute('href'), '#/privacy');
    assert.equal((await link.innerText()).trim(), 'Answer it on “Who can see my words”');
  });

  test('an end names who ended it, and offers a new key', async () => {
    await show([notice(3, 'supervision_ended', { supervisor: 'Ada', by: 'Bo', rotate: true })]);
    assert.equal(await sentence('supervision_ended'), 'Bo ended the access of Ada to your space. You can now give it a new key.');
  });
});
