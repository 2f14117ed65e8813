// The question card in Chromium: a suggestion answers with one click, or the person types
// their own answer; nothing is sent blank or twice while an answer is on its way.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { componentFixture, emitted, mount, recordEvents, setProperties } from '../../../tests/mount.mjs';

const card = (suggestions) => ({
  id: 'card_3',
  kind: 'question',
  state: 'pending',
  summary: 'Which list?',
  session_id: 'chat_1',
  created_at: '2026-01-01T00:00:00Z',
  details: { question: 'Which list should I add eggs to?', ...(suggestions ? { suggestions } : {}), call_id: 'call_2' },
});

describe('the question card', () => {
  const { page } = componentFixture(['components/skald-question-card/skald-question-card.ts']);

  const show = async (properties) => {
    await mount(page, '<skald-question-card></skald-question-card>', properties);
    await recordEvents(page, ['skald-answer']);
  };
  const answers = async () => (await emitted(page)).map((e) => [e.card.id, e.answer]);
  const field = () => page.locator('[data-testid=answer-field]');

  test('it asks the question and offers the suggestions; a click answers with one', async () => {
    await show({ card: card(['Shopping', 'Camping trip']) });
    assert.equal(await page.locator('skald-question-card .question').textContent(), 'Which list should I add eggs to?');
    assert.deepEqual((await page.locator('[data-testid=suggestion]').allTextContents()).map((t) => t.trim()), ['Shopping', 'Camping trip']);
    await page.getByRole('button', { name: 'Camping trip' }).click();
    assert.deepEqual(await answers(), [['card_3', 'Camping trip']]);
  });

  test('an answer in the person\'s own words goes with Enter, trimmed; a blank one cannot', async () => {
    await show({ card: card() });
    assert.equal(await page.locator('[data-testid=suggestion]').count(), 0);
    assert.ok(await page.locator('[data-testid=answer]').isDisabled());
    await field().click();
    await page.keyboard.type('   ');
    await page.keyboard.press('Enter');
    assert.deepEqual(await answers(), []);
    await page.keyboard.type('the one on the fridge  ');
    await page.keyboard.press('Enter');
    assert.deepEqual(await answers(), [['card_3', 'the one on the fridge']]);
  });

  test('while an answer is on its way nothing more is sent; a failed one says why', async () => {
    await show({ card: card(['Shopping']) });
    await field().fill('mine');
    await setProperties(page, 'skald-question-card', { busy: true });
    assert.ok(await page.locator('[data-testid=suggestion]').isDisabled());
    assert.ok(await page.locator('[data-testid=answer]').isDisabled());
    await field().press('Enter');
    assert.deepEqual(await answers(), []);
    await setProperties(page, 'skald-question-card', { busy: false, error: 'The question was withdrawn.' });
    assert.equal(await page.locator('skald-question-card').getByRole('alert').textContent(), 'The question was withdrawn.');
  });
});
