// A tool server's request for a model's answer in Chromium: exactly what the model would
// read, which model answers and where it is, the length asked for; allowed or denied,
// never "always", and nothing sent while a decision is on its way.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { componentFixture, emitted, mount, recordEvents, setProperties } from '../../../tests/mount.mjs';

const card = () => ({
  id: 'card_7',
  kind: 'sample',
  state: 'pending',
  summary: 'everything asks for an answer from scripted/m',
  session_id: 'chat_1',
  created_at: '2026-01-01T00:00:00Z',
  details: {
    tool: 'mcp__everything__trigger-sampling-request',
    server: 'everything',
    system: 'You are a helpful test server.',
    messages: [
      { role: 'user', text: 'Write a haiku about rain.' },
      { role: 'assistant', text: 'Drops on the window' },
    ],
    max_tokens: 100,
    hints: ['claude-3'],
    model: 'scripted/m',
    privacy: 'remote',
    turn_id: 'turn_1',
    call_id: 'call_1',
    for: { id: 'u1', name: 'Ada' },
  },
});

describe('the sampling card', () => {
  const { page } = componentFixture(['components/skald-sample-card/skald-sample-card.ts']);

  const show = async () => {
    await mount(page, '<skald-sample-card></skald-sample-card>', { card: card() });
    await recordEvents(page, ['skald-decide']);
  };

  test('it shows the instructions and each message as the model would read them, and which model answers where', async () => {
    await show();
    assert.equal(await page.locator('skald-sample-card h3').textContent(), 'everything asks for a model’s answer');
    assert.equal(await page.locator('[data-testid=sample-system]').textContent(), 'You are a helpful test server.');
    const messages = page.locator('[data-testid=sample-message]');
    assert.equal(await messages.count(), 2);
    assert.equal(await messages.nth(0).getAttribute('data-role'), 'user');
    assert.match(await messages.nth(0).textContent(), /as if from you\s*Write a haiku about rain\./);
    assert.match(await messages.nth(1).textContent(), /as if from the model\s*Drops on the window/);
    const model = await page.locator('[data-testid=sample-model]').textContent();
    assert.match(model, /Your model scripted\/m would answer · outside your home network/);
    assert.match(model, /for Ada/);
    assert.ok(await page.getByText('An answer of up to 100 tokens, counted in your usage').isVisible());
    assert.ok(await page.getByText('The server would prefer: claude-3').isVisible());
    assert.ok(await page.getByText(/nothing of this conversation/).isVisible(), 'it says what is not sent');
  });

  test('allow and deny are decisions, never "always"; nothing goes while one is on its way', async () => {
    await show();
    assert.equal(await page.locator('[data-testid=always]').count(), 0);
    await page.locator('[data-testid=allow]').click();
    await page.locator('[data-testid=deny]').click();
    const decided = (await emitted(page)).map((e) => [e.card.id, e.decision, e.always]);
    assert.deepEqual(decided, [
      ['card_7', 'allow', false],
      ['card_7', 'deny', false],
    ]);
    await setProperties(page, 'skald-sample-card', { busy: true });
    assert.ok(await page.locator('[data-testid=allow]').isDisabled());
    assert.ok(await page.locator('[data-testid=deny]').isDisabled());
    await setProperties(page, 'skald-sample-card', { busy: false, error: 'the call ended' });
    assert.equal(await page.locator('skald-sample-card').getByRole('alert').textContent(), 'the call ended');
  });

  test('a request without instructions shows none, and a local model says it stays here', async () => {
    const local = card();
    delete local.details.system;
    local.details.privacy = 'local';
    local.details.hints = [];
    await mount(page, '<skald-sample-card></skald-sample-card>', { card: local });
    assert.equal(await page.locator('[data-testid=sample-system]').count(), 0);
    assert.match(await page.locator('[data-testid=sample-model]').textContent(), /on this computer or your home network/);
    assert.equal(await page.getByText(/would prefer/).count(), 0);
  });
});
