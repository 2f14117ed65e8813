// The approval card in Chromium: what a person reads on it (the tool, for whom, why, the
// exact arguments and their fingerprint) and what each of Allow, Deny and Always allow
// hands up — the card itself, so the decision is bound to the arguments shown.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { componentFixture, emitted, mount, recordEvents, setProperties } from '../../../tests/mount.mjs';

const HASH = '9f2c4e1ab37d55c0e8f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7';

const card = (details = {}) => ({
  id: 'card_7',
  kind: 'approval',
  state: 'pending',
  summary: 'Write the note "Shopping"',
  session_id: 'chat_1',
  created_at: '2026-01-01T00:00:00Z',
  details: {
    tool: 'note_write',
    arguments: '{"title":"Shopping","body":"eggs, <b>milk</b>\\nand bread"}',
    arguments_hash: HASH,
    why: 'You asked me to keep the list.',
    reason: 'note_write asks first',
    for: { id: 'user_2', name: 'Bea' },
    call_id: 'call_1',
    ...details,
  },
});

describe('the approval card', () => {
  const { page } = componentFixture(['components/skald-approval-card/skald-approval-card.ts']);

  const show = async (properties) => {
    await mount(page, '<skald-approval-card></skald-approval-card>', properties);
    await recordEvents(page, ['skald-decide']);
  };
  const button = (testid) => page.locator(`[data-testid=${testid}]`);
  const decisions = async () => (await emitted(page)).map((e) => ({ card: e.card.id, hash: e.card.details.arguments_hash, decision: e.decision, always: e.always }));

  test('it says what, for whom and why, and shows the exact arguments with their fingerprint', async () => {
    await show({ card: card(), mayApprove: true });
    const section = page.locator('skald-approval-card section');
    assert.equal(await section.getByRole('heading').textContent(), 'Skald wants to: Write a note');
    const text = await section.innerText();
    assert.match(text, /Write the note "Shopping"/);
    assert.match(text, /for Bea/);
    assert.match(text, /You asked me to keep the list\./);
    assert.match(text, /note_write asks first/);
    // Exactly the arguments, indented, markup shown as text and not rendered.
    assert.equal(
      await button('card-arguments').textContent(),
      JSON.stringify({ title: 'Shopping', body: 'eggs, <b>milk</b>\nand bread' }, null, 2),
    );
    assert.equal(await button('card-arguments').locator('b').count(), 0);
    const fingerprint = section.getByText(`Fingerprint ${HASH.slice(0, 12)}`);
    assert.equal(await fingerprint.getAttribute('title'), HASH, 'the whole hash is one hover away');
  });

  test('arguments that are no JSON are shown as they came; JSON objects as indented JSON', async () => {
    await show({ card: card({ arguments: 'rm -rf ~/notes {' }), mayApprove: true });
    assert.equal(await button('card-arguments').textContent(), 'rm -rf ~/notes {');
    await setProperties(page, 'skald-approval-card', { card: card({ arguments: { path: '/tmp/a', lines: [1, 2] } }) });
    assert.equal(await button('card-arguments').textContent(), '{\n  "path": "/tmp/a",\n  "lines": [\n    1,\n    2\n  ]\n}');
  });

  test('Allow, Deny and Always allow each hand up the card, bound to its arguments\' hash', async () => {
    await show({ card: card(), mayApprove: true });
    await button('allow').click();
    await button('deny').click();
    await button('always').click();
    await button('confirm-ok').click();
    assert.deepEqual(await decisions(), [
      { card: 'card_7', hash: HASH, decision: 'allow', always: false },
      { card: 'card_7', hash: HASH, decision: 'deny', always: false },
      { card: 'card_7', hash: HASH, decision: 'allow', always: true },
    ]);
    assert.equal(await button('always').getAttribute('title'), 'Allow now, and let Skald use note_write without asking you again');
  });

  test('Always allow asks again first, says how to take it back, and a No decides nothing', async () => {
    await show({ card: card(), mayApprove: true });
    await button('always').click();
    const dialog = page.locator('skald-approval-card skald-confirm dialog');
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /Always allow “Write a note”\?[\s\S]*without asking[\s\S]*My data, under Always allowed/);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    assert.deepEqual(await decisions(), [], 'nothing was decided');
  });

  test('the keyboard reaches every choice: Tab to Deny, Enter decides', async () => {
    await show({ card: card(), mayApprove: true });
    await button('allow').focus();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Space');
    await button('confirm-ok').focus();
    await page.keyboard.press('Enter');
    assert.deepEqual((await decisions()).map((d) => [d.decision, d.always]), [['deny', false], ['allow', true]]);
  });

  test('a role that may not approve sees why, and can only deny', async () => {
    await show({ card: card(), mayApprove: false });
    assert.equal(await button('allow').count(), 0);
    assert.equal(await button('always').count(), 0);
    assert.match(await page.locator('skald-approval-card .hint').innerText(), /Your role cannot approve this/);
    await button('deny').click();
    assert.deepEqual(await decisions(), [{ card: 'card_7', hash: HASH, decision: 'deny', always: false }]);
  });

  test('while a decision is on its way every choice is off; a failed one says why', async () => {
    await show({ card: card(), mayApprove: true, busy: true });
    for (const testid of ['allow', 'deny', 'always']) assert.ok(await button(testid).isDisabled(), testid);
    // Not even a click the page makes itself gets through.
    await page.evaluate(() => document.querySelector('skald-approval-card').shadowRoot.querySelector('[data-testid=allow]').click());
    assert.deepEqual(await decisions(), []);

    await setProperties(page, 'skald-approval-card', { busy: false, error: 'Someone decided this card in another window.' });
    assert.equal(await page.locator('skald-approval-card').getByRole('alert').innerText(), 'Someone decided this card in another window.');
    await button('allow').click();
    assert.deepEqual((await decisions()).map((d) => d.decision), ['allow']);
  });
});
