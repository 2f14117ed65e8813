// A tool server's form card in Chromium: its fields drawn from the server's schema with
// the defaults filled in, sent as typed, declined or cancelled; nothing sent while a reply
// is on its way.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { componentFixture, emitted, mount, recordEvents, setProperties } from '../../../tests/mount.mjs';

const card = () => ({
  id: 'card_9',
  kind: 'form',
  state: 'pending',
  summary: 'everything asks: Please provide inputs',
  session_id: 'chat_1',
  created_at: '2026-01-01T00:00:00Z',
  details: {
    tool: 'mcp__everything__trigger-elicitation-request',
    server: 'everything',
    message: 'Please provide inputs for the following fields:',
    turn_id: 'turn_1',
    call_id: 'call_1',
    schema: {
      type: 'object',
      properties: {
        name: { type: 'string', title: 'Name', description: 'Your full name' },
        check: { type: 'boolean', title: 'Agree' },
        integer: { type: 'integer', title: 'Integer', default: 42 },
        hero: { type: 'string', title: 'Hero', oneOf: [{ const: 'hero-1', title: 'Superman' }, { const: 'hero-2', title: 'Green Lantern' }], default: 'hero-1' },
        fish: { type: 'array', title: 'Fish', items: { anyOf: [{ const: 'fish-1', title: 'Tuna' }, { const: 'fish-2', title: 'Salmon' }] }, default: ['fish-1'] },
      },
      required: ['name'],
    },
  },
});

describe('the form card', () => {
  const { page } = componentFixture(['components/skald-form-card/skald-form-card.ts']);

  const show = async () => {
    await mount(page, '<skald-form-card></skald-form-card>', { card: card() });
    await recordEvents(page, ['skald-form-reply']);
  };
  const replies = async () => (await emitted(page)).map((e) => [e.card.id, e.decision, e.content]);

  test('it shows the server, its words and a field per property, defaults filled in', async () => {
    await show();
    assert.equal(await page.locator('skald-form-card .kind').textContent(), 'everything asks');
    assert.equal(await page.locator('skald-form-card .question').textContent(), 'Please provide inputs for the following fields:');
    assert.equal(await page.getByLabel('Integer').inputValue(), '42');
    assert.equal(await page.getByLabel('Hero').inputValue(), 'hero-1');
    assert.ok(await page.getByLabel('Tuna').isChecked());
    assert.ok(!(await page.getByLabel('Salmon').isChecked()));
    assert.ok(await page.getByText(/goes to everything only/).isVisible(), 'it says who gets what is typed');
  });

  test('send gives the form as typed, with numbers as numbers and choices as chosen', async () => {
    await show();
    await page.getByLabel('Name').fill('Ada Lovelace');
    await page.getByLabel('Agree').check();
    await page.getByLabel('Integer').fill('7');
    await page.getByLabel('Hero').selectOption('hero-2');
    await page.getByLabel('Salmon').check();
    await page.locator('[data-testid=form-accept]').click();
    assert.deepEqual(await replies(), [
      ['card_9', 'accept', { name: 'Ada Lovelace', check: true, integer: 7, hero: 'hero-2', fish: ['fish-1', 'fish-2'] }],
    ]);
  });

  test('decline and cancel send no content; nothing goes while a reply is on its way', async () => {
    await show();
    await page.getByLabel('Name').fill('not sent');
    await page.locator('[data-testid=form-decline]').click();
    await page.locator('[data-testid=form-cancel]').click();
    assert.deepEqual(await replies(), [
      ['card_9', 'decline', null],
      ['card_9', 'cancel', null],
    ]);
    await setProperties(page, 'skald-form-card', { busy: true });
    assert.ok(await page.locator('[data-testid=form-accept]').isDisabled());
    await setProperties(page, 'skald-form-card', { busy: false, error: 'The field "name" is required' });
    assert.equal(await page.locator('skald-form-card').getByRole('alert').textContent(), 'The field "name" is required');
  });
});
