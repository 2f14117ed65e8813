// The approval card in Chromium: what a person reads on it (the tool, for whom, why, the
// exact arguments and their fingerprint) and what each of Allow, Deny and Always allow
// hands up — the card itself, so the decision is bound to the arguments shown. A remember
// card shows its memory's five lines, its warnings, and Replace it / Keep both / Deny. A
// card the role sends to the supervisor waits for them by name; shown to the supervisor it
// offers Allow once and Deny; a decided card says who decided it.
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

  test('a card the supervisor decides names them, offers only Deny, and says nothing of asking someone else', async () => {
    await show({ card: card({ reason: 'no rule covers note_write; your supervisor decides' }), mayApprove: false, supervisors: ['Ada'] });
    assert.equal(await button('allow').count(), 0);
    assert.equal(await button('always').count(), 0);
    assert.equal(
      await button('card-waiting-supervisor').innerText(),
      'Waiting for your supervisor (Ada). Only they can allow it; you can still refuse it.',
    );
    assert.doesNotMatch(await page.locator('skald-approval-card section').innerText(), /Your role cannot approve this/);
    await setProperties(page, 'skald-approval-card', { supervisors: ['Ada', 'Eve'] });
    assert.match(await button('card-waiting-supervisor').innerText(), /^Waiting for your supervisor \(Ada and Eve\)\./);
    await setProperties(page, 'skald-approval-card', { supervisors: [] });
    assert.match(await button('card-waiting-supervisor').innerText(), /^Waiting for your supervisor\. Only they/);
    await button('deny').click();
    assert.deepEqual(await decisions(), [{ card: 'card_7', hash: HASH, decision: 'deny', always: false }]);
  });

  test('shown to the supervisor: exactly what it runs in full view, Allow once and Deny, never always', async () => {
    await show({ card: card(), supervising: true });
    assert.equal(await button('always').count(), 0);
    assert.equal(await button('card-waiting-supervisor').count(), 0);
    assert.equal((await button('allow').innerText()).trim(), 'Allow once');
    assert.ok(await button('card-arguments').isVisible(), 'the arguments are not behind a disclosure');
    assert.equal(await page.locator('skald-approval-card details.exact').count(), 0);
    assert.match(await page.locator('skald-approval-card section').innerText(), /Exactly this:/);
    await button('allow').click();
    await button('deny').click();
    assert.deepEqual(await decisions(), [
      { card: 'card_7', hash: HASH, decision: 'allow', always: false },
      { card: 'card_7', hash: HASH, decision: 'deny', always: false },
    ]);
  });

  test('a decided card says how, and by whom when it was not the person; nothing is left to press', async () => {
    await show({ card: { ...card(), state: 'allowed', decided_by: 'Ada' }, supervising: true });
    const decided = button('card-decided');
    assert.equal(await decided.textContent(), 'Allowed by Ada');
    assert.equal(await decided.getAttribute('data-state'), 'allowed');
    for (const testid of ['allow', 'deny', 'always']) assert.equal(await button(testid).count(), 0, testid);
    await setProperties(page, 'skald-approval-card', { card: { ...card(), state: 'denied', decided_by: 'Ada' } });
    assert.equal(await decided.textContent(), 'Denied by Ada');
    await setProperties(page, 'skald-approval-card', { card: { ...card(), state: 'denied' } });
    assert.equal(await decided.textContent(), 'Denied');
  });

  const remember = (memory = {}) =>
    card({
      tool: 'remember',
      arguments: { text: 'Bea takes her coffee black.', pool: 'shared', subject: { kind: 'member', id: 'user_2' } },
      why: 'Bea said so.',
      reason: 'remember is always confirmed by the person',
      memory: {
        text: 'Bea takes her coffee black.',
        pool: 'shared',
        subject: { kind: 'member', id: 'user_2' },
        about: 'Bea',
        about_another: false,
        agent: 'main',
        kept_until: '2027-03-02T12:00:00Z',
        local_only: false,
        similar: [],
        ...memory,
      },
    });
  const lines = async () =>
    Object.fromEntries(
      await page.locator('skald-approval-card [data-testid=memory-lines] [data-line]').evaluateAll((els) =>
        els.map((el) => [el.dataset.line, `${el.querySelector('dt').textContent.trim()}: ${el.querySelector('dd').textContent.trim()}`]),
      ),
    );

  test('a remember card shows its five lines, and never offers always allow', async () => {
    await show({ card: remember(), mayApprove: true });
    assert.deepEqual(await lines(), {
      remember: 'Remember: Bea takes her coffee black.',
      about: 'About: Bea',
      author: 'Written by: an agent, not a person (main)',
      kept: 'Kept until: Mar 2, 2027',
      where: 'Where: everyone here and the administrator can read it',
    });
    assert.equal(await button('always').count(), 0);
    assert.equal(await button('allow').innerText(), 'Allow');
    for (const testid of ['memory-about-another', 'memory-local', 'memory-problem', 'replace']) assert.equal(await button(testid).count(), 0, testid);
    await button('allow').click();
    assert.deepEqual((await emitted(page)).map((e) => [e.decision, e.always, e.replace]), [['allow', false, undefined]]);
  });

  test('about another member it warns; this home, kept here only, and a problem each say so', async () => {
    await show({ card: remember({ about_another: true }), mayApprove: true });
    assert.match(await button('memory-about-another').innerText(), /personal data about Bea\. If it is shared, Bea will be able to see it, and it can be listed or erased/);
    await setProperties(page, 'skald-approval-card', {
      card: remember({ pool: 'private', subject: { kind: 'instance' }, about: null, local_only: true, problem: 'a memory is one sentence' }),
    });
    const found = await lines();
    assert.equal(found.about, 'About: this home');
    assert.equal(found.where, 'Where: only you can read it');
    assert.match(await button('memory-local').innerText(), /stays on this computer/);
    assert.equal(await button('memory-problem').innerText(), 'As it stands this would fail: a memory is one sentence');
  });

  test('something similar kept: Replace it names it, Keep both allows, Deny denies', async () => {
    await show({ card: remember({ similar: [{ id: 'mem_1', text: 'Bea takes milk in her coffee.', pool: 'shared' }] }), mayApprove: true });
    const similar = page.locator('skald-approval-card .similar');
    assert.match(await similar.innerText(), /Something similar is already kept:[\s\S]*Bea takes milk in her coffee\./);
    assert.equal(await button('allow').innerText(), 'Keep both');
    await button('replace').click();
    await button('allow').click();
    await button('deny').click();
    assert.deepEqual((await emitted(page)).map((e) => [e.decision, e.always, e.replace]), [
      ['allow', false, 'mem_1'],
      ['allow', false, undefined],
      ['deny', false, undefined],
    ]);
    // Someone whose role may not approve can only deny, and replace nothing.
    await setProperties(page, 'skald-approval-card', { mayApprove: false });
    assert.equal(await button('replace').count(), 0);
  });
  test('a schedule card shows what, the next three times in its zone, the repeat, who runs it and for whom', async () => {
    const job = {
      kind: 'task',
      text: 'Sum up the week',
      zone: 'Asia/Tokyo',
      upcoming: ['2027-03-01T07:00:00+09:00', '2027-03-02T07:00:00+09:00', '2027-03-03T07:00:00+09:00'],
      repeat: '0 7 * * 1-5',
      missed: 'run_once',
      readable_while_away: false,
      agent: 'main',
      model: 'scripted/small',
      for: null,
      shared: false,
    };
    const args = '{"kind":"task","text":"Sum up the week","cron":"0 7 * * 1-5","zone":"Asia/Tokyo","missed":"run_once","model":"scripted/small"}';
    await show({ card: card({ tool: 'schedule', arguments: args, schedule: job, for: undefined }), mayApprove: true });
    const schedule = async () =>
      Object.fromEntries(
        await page.locator('[data-testid=schedule-lines] [data-line]').evaluateAll((rows) => rows.map((row) => [row.dataset.line, row.innerText.replace(/\s+/g, ' ').trim()])),
      );
    const found = await schedule();
    assert.equal(found.what, 'What A task for the assistant: “Sum up the week”');
    assert.equal(found.repeat, 'Repeats 0 7 * * 1-5');
    assert.equal(found.runs, 'Runs as the agent main, with scripted/small');
    assert.equal(found.for, 'For You');
    assert.match(found.missed, /show it once when Skald opens/);
    // The times as they read in Tokyo, whatever this computer's zone: 07:00 on Monday to Wednesday.
    const times = await button('schedule-upcoming').locator('li').allInnerTexts();
    assert.equal(times.length, 3);
    times.forEach((time, i) => assert.match(time, new RegExp(`${['Mon', 'Tue', 'Wed'][i]}.*${i + 1}.*07:00`), time));
    assert.match(found.next, /^Next, in Asia\/Tokyo/);
    // The exact arguments stay one click away, with their fingerprint.
    assert.equal(await button('card-arguments').textContent(), JSON.stringify(JSON.parse(args), null, 2));

    await setProperties(page, 'skald-approval-card', {
      card: card({ tool: 'schedule', arguments: '{}', schedule: { ...job, kind: 'reminder', agent: null, model: null, repeat: null, for: 'Bo' }, for: undefined }),
    });
    const other = await schedule();
    assert.equal(other.repeat, 'Repeats Once');
    assert.equal(other.runs, undefined, 'a reminder runs no agent');
    assert.match(other.for, /Bo — it becomes theirs/);
    await setProperties(page, 'skald-approval-card', { card: card({ tool: 'schedule', arguments: '{}', schedule: { ...job, kind: 'reminder', shared: true }, for: undefined }) });
    assert.match((await schedule()).for, /Everyone — its words readable by all/);
  });
});
