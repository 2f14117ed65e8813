// Memories (§10) in the browser: the model proposes one and the person confirms it on a
// card that shows exactly what would be kept — the sentence, about whom, that an agent
// wrote it, until when, who can read it — and the Memory page lists what is kept, with
// search, pin, edit, erase, erase everything about someone, and a memory added by hand.
// Both screens are axe-clean in the light and the dark theme. A reply that recalled a
// memory says "Used 1 memory", linked to the Memory page, which shows it marked (or says
// it is gone); the page says it searches by words only while no memory search model is
// here, and names people rather than showing their ids.
//
//   SKALD_BIN=/path/to/skald node --test tests/e2e/memory.test.mjs
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { api, axeViolationsInThemes, logIn, openPage, problems, seedInstance, startStack, stopStack } from './harness.mjs';

const ADA = { name: 'Ada', password: 'otter lantern quietly' };
const BEA = { name: 'Bea', password: 'maple harbour violin' };
const TIMEOUT = 20_000;
/** A day as Chromium's English medium date style writes it: "Mar 2, 2027". */
const DAY = /[A-Z][a-z]{2} \d{1,2}, \d{4}/;

/** What each labelled line of the card says, by its key. */
const cardLines = (card) =>
  card.locator('[data-testid=memory-lines] [data-line]').evaluateAll((els) =>
    Object.fromEntries(els.map((el) => [el.dataset.line, `${el.querySelector('dt').textContent.trim()}: ${el.querySelector('dd').textContent.trim()}`])),
  );

describe('memories', () => {
  let stack;
  let token;
  let bea;

  before(async () => {
    stack = await startStack();
    const { setup, enrolled } = await seedInstance(stack.server, stack.model, ADA, [[BEA, 'member']]);
    token = setup.token;
    bea = enrolled[0].user.id;
  });

  after(() => stopStack(stack));

  test('a remember call makes a card with its five lines; allowed, the Memory page lists it as the agent’s, with an expiry', async () => {
    const { page, consoleMessages, failedResponses, close } = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
    try {
      await logIn(page, ADA, TIMEOUT);
      await stack.model.push([
        {
          text: 'I will keep that in mind.',
          tool_calls: [{ name: 'remember', arguments: { text: 'Ada takes her tea with lemon.', pool: 'private', subject: { kind: 'self' } } }],
        },
        { text: 'Kept.' },
      ]);
      await page.locator('[data-testid=composer]').fill('Remember that I take my tea with lemon.');
      await page.keyboard.press('Enter');
      const card = page.locator('skald-approval-card');
      await card.locator('[data-testid=memory-lines]').waitFor({ timeout: TIMEOUT });
      const lines = await cardLines(card);
      assert.equal(lines.remember, 'Remember: Ada takes her tea with lemon.');
      assert.equal(lines.about, 'About: Ada');
      assert.equal(lines.author, 'Written by: an agent, not a person (main)');
      assert.match(lines.kept, new RegExp(`^Kept until: ${DAY.source}$`));
      assert.equal(lines.where, 'Where: only you can read it');
      assert.equal(await card.locator('[data-testid=always]').count(), 0, 'no always allow on a memory');
      assert.equal(await card.locator('[data-testid=memory-about-another]').count(), 0, 'about Ada herself: no warning');
      assert.deepEqual(await axeViolationsInThemes(page, { screenshot: 'memory-card' }), [], 'the remember card, in both themes');

      await card.locator('[data-testid=allow]').click();
      await page.locator('[data-testid=turn][data-status=done]').waitFor({ timeout: TIMEOUT });

      // A second, alike: the card offers to replace the first, and Replace it does.
      await stack.model.push([
        {
          text: 'Updating that.',
          tool_calls: [{ name: 'remember', arguments: { text: 'Ada takes her tea with lemon and honey.', pool: 'private', subject: { kind: 'self' } } }],
        },
        { text: 'Replaced.' },
      ]);
      await page.locator('[data-testid=composer]').fill('Actually, with honey too.');
      await page.keyboard.press('Enter');
      const replace = card.locator('[data-testid=replace]');
      await replace.waitFor({ timeout: TIMEOUT });
      assert.match(await card.locator('.similar').innerText(), /Ada takes her tea with lemon\./);
      assert.equal(await card.locator('[data-testid=allow]').innerText(), 'Keep both');
      await replace.click();
      await page.locator('[data-testid=turn][data-status=done]').nth(1).waitFor({ timeout: TIMEOUT });

      // About Bea, for everyone: the card says it is personal data about her; denied, nothing is kept.
      await stack.model.push([
        {
          text: 'Noting that for everyone.',
          tool_calls: [{ name: 'remember', arguments: { text: 'Bea is allergic to nuts.', pool: 'shared', subject: { kind: 'member', id: bea } } }],
        },
        { text: 'Not kept.' },
      ]);
      await page.locator('[data-testid=composer]').fill('Bea is allergic to nuts, tell everyone.');
      await page.keyboard.press('Enter');
      const warning = card.locator('[data-testid=memory-about-another]');
      await warning.waitFor({ timeout: TIMEOUT });
      assert.match(await warning.innerText(), /personal data about Bea\. If it is shared, Bea will be able to see it, and it can be listed or erased/);
      const about = await cardLines(card);
      assert.equal(about.about, 'About: Bea');
      assert.equal(about.where, 'Where: everyone here and the administrator can read it');
      await card.locator('[data-testid=deny]').click();
      await page.locator('[data-testid=turn][data-status=done]').nth(2).waitFor({ timeout: TIMEOUT });

      await page.locator('[data-testid=nav-memories]').click();
      await page.locator('#main[data-page=memories]').waitFor({ timeout: TIMEOUT });
      const items = page.locator('[data-testid=memory-item]');
      await items.first().waitFor({ timeout: TIMEOUT });
      assert.equal(await items.count(), 1, 'the first one was replaced');
      const item = items.first();
      assert.equal(await item.locator('[data-testid=memory-text]').innerText(), 'Ada takes her tea with lemon and honey.');
      assert.equal(await item.locator('[data-testid=memory-pool]').innerText(), 'Only you');
      assert.equal(await item.locator('[data-testid=memory-about]').innerText(), 'About you');
      assert.equal(
        await item.locator('[data-testid=memory-author]').innerText(),
        'Written by an agent (main), in “Remember that I take my tea with lemon.”',
        'the conversation it came from, by its title',
      );
      assert.match(await item.locator('[data-testid=memory-expiry]').innerText(), new RegExp(`^Kept until ${DAY.source}$`));

      // The conversation it came from is one click away.
      await item.locator('[data-testid=memory-conversation]').click();
      await page.locator('#main[data-page=chat]').waitFor({ timeout: TIMEOUT });
      await page.locator('[data-testid=user-message]', { hasText: 'Actually, with honey too.' }).waitFor({ timeout: TIMEOUT });
      assert.equal((await api(stack.server.origin, token, 'GET', '/api/memories')).length, 1, 'the denied one was not kept');
      assert.deepEqual(problems(consoleMessages), []);
      assert.deepEqual(failedResponses, []);
    } finally {
      await close();
    }
  });

  test('the Memory page: add by hand, search, pin, edit, erase one, erase everything about someone', async () => {
    // Start from nothing kept: what the first test left is erased through the API.
    await api(stack.server.origin, token, 'POST', '/api/memories/erase', { subject: { kind: 'self' } });
    const { page, consoleMessages, failedResponses, close } = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
    try {
      await logIn(page, ADA, TIMEOUT);
      await page.locator('[data-testid=nav-memories]').click();
      await page.locator('[data-testid=memories-empty]').waitFor({ timeout: TIMEOUT });

      const items = page.locator('[data-testid=memory-item]');
      const item = (text) => items.filter({ has: page.locator('[data-testid=memory-text]', { hasText: text }) });
      const add = async (text, { pool = 'private', subject = 'self' } = {}) => {
        await page.locator('[data-testid=memory-add-text]').fill(text);
        await page.locator('[data-testid=memory-add-pool]').selectOption(pool);
        await page.locator('[data-testid=memory-add-subject]').selectOption(subject);
        await page.locator('[data-testid=memory-add]').click();
      };

      // The server's reason shows when it refuses one.
      await add('Ada likes walks. She hates rain.');
      assert.match(await page.locator('[data-testid=memory-add-error]').innerText(), /^A memory is one sentence/);
      assert.equal(await page.locator('[data-testid=memory-add-text]').inputValue(), 'Ada likes walks. She hates rain.', 'what was typed stays');

      await add('Ada has a cat called Pip.');
      await item('Ada has a cat called Pip.').waitFor({ timeout: TIMEOUT });
      assert.equal(await page.locator('[data-testid=memory-add-error]').count(), 0);
      assert.equal(await page.locator('[data-testid=memory-add-text]').inputValue(), '', 'the field is ready for the next');
      await add('Ada walks every morning.');
      await item('Ada walks every morning.').waitFor({ timeout: TIMEOUT });
      await add('The front door sticks in winter.', { pool: 'shared', subject: 'instance' });
      const door = item('The front door sticks in winter.');
      await door.waitFor({ timeout: TIMEOUT });
      assert.equal(await door.locator('[data-testid=memory-pool]').innerText(), 'Everyone here and the administrator');
      assert.equal(await door.locator('[data-testid=memory-about]').innerText(), 'About this home');
      assert.equal(await door.locator('[data-testid=memory-author]').innerText(), 'Written by you');
      assert.equal(await items.count(), 3);
      assert.deepEqual(await axeViolationsInThemes(page, { screenshot: 'memory-page' }), [], 'the Memory page, in both themes');

      // Search, then back to everything.
      await page.locator('[data-testid=memories-search]').fill('cat');
      await item('Ada walks every morning.').waitFor({ state: 'detached', timeout: TIMEOUT });
      assert.equal(await items.count(), 1);
      assert.equal(await items.first().locator('[data-testid=memory-text]').innerText(), 'Ada has a cat called Pip.');
      await page.locator('[data-testid=memories-search]').fill('');
      await items.nth(2).waitFor({ timeout: TIMEOUT });

      // Pinned, it is kept until removed; let go, it has an expiry again.
      const cat = item('Ada has a cat called Pip.');
      assert.match(await cat.locator('[data-testid=memory-expiry]').innerText(), new RegExp(`^Kept until ${DAY.source}$`));
      await cat.locator('[data-testid=memory-pin]').click();
      await cat.locator('[data-testid=memory-expiry]', { hasText: 'Kept until you remove it' }).waitFor({ timeout: TIMEOUT });
      assert.equal(await cat.locator('[data-testid=memory-pin]').getAttribute('aria-label'), 'Let it expire');

      // Edited in place.
      await cat.locator('[data-testid=memory-edit]').click();
      await page.locator('[data-testid=memory-edit-text]').fill('Ada has a cat called Pippin.');
      await page.locator('[data-testid=memory-save]').click();
      const pippin = item('Ada has a cat called Pippin.');
      await pippin.waitFor({ timeout: TIMEOUT });
      assert.equal(await pippin.locator('[data-testid=memory-expiry]').innerText(), 'Kept until you remove it', 'still pinned');
      const [kept] = (await api(stack.server.origin, token, 'GET', '/api/memories?q=Pippin')).filter((m) => m.text === 'Ada has a cat called Pippin.');
      assert.ok(kept?.pinned, 'the server keeps the new words, pinned');

      // Erase one, asked first.
      await door.locator('[data-testid=memory-erase]').click();
      const dialog = page.locator('skald-memories skald-confirm dialog');
      await dialog.waitFor();
      assert.match(await dialog.innerText(), /“The front door sticks in winter\.” will be gone for good/);
      await page.locator('skald-memories [data-testid=confirm-ok]').click();
      await door.waitFor({ state: 'detached', timeout: TIMEOUT });
      assert.equal(await items.count(), 2);

      // Everything about Ada: the confirm names how many.
      await page.locator('[data-testid=memories-subject]').selectOption('self');
      await page.locator('[data-testid=erase-about]').click();
      await dialog.waitFor();
      assert.match(await dialog.innerText(), /Erase everything about you\?[\s\S]*This erases 2 memories about you for good/);
      await page.locator('skald-memories [data-testid=confirm-ok]').click();
      await page.locator('[data-testid=memories-empty]').waitFor({ timeout: TIMEOUT });
      assert.deepEqual(await api(stack.server.origin, token, 'GET', '/api/memories'), []);
      assert.match(await page.locator('skald-memories [role=status]').innerText(), /2 memories erased\./);

      assert.deepEqual(problems(consoleMessages), []);
      assert.deepEqual(failedResponses, ['POST /api/memories 400'], 'only the refused sentence failed');
    } finally {
      await close();
    }
  });
  test('a reply that recalled a memory says "Used 1 memory"; its link opens the Memory page on it, marked', async () => {
    await api(stack.server.origin, token, 'POST', '/api/memories/erase', { subject: { kind: 'self' } });
    await api(stack.server.origin, token, 'POST', '/api/memories/erase', { subject: { kind: 'instance' } });
    // Recall goes by words here (no memory search model): the message shares "tea" and "morning" with it.
    const { id } = await api(stack.server.origin, token, 'POST', '/api/memories', {
      text: 'Ada drinks green tea every morning.',
      pool: 'private',
      subject: { kind: 'self' },
    });
    const { page, consoleMessages, failedResponses, close } = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
    try {
      await logIn(page, ADA, TIMEOUT);
      await page.locator('[data-testid=new-chat]').click();
      await stack.model.push({ text: 'Green tea, as every morning.' });
      await page.locator('[data-testid=composer]').fill('Which tea should I make this morning?');
      await page.keyboard.press('Enter');
      const turn = page.locator('[data-testid=turn][data-status=done]');
      await turn.waitFor({ timeout: TIMEOUT });
      const [request] = (await stack.model.requests()).slice(-1);
      assert.ok(
        request.body.messages.some((m) => m.role === 'tool' && m.content.includes(`${id} (private): Ada drinks green tea every morning.`)),
        'the model was given the memory',
      );

      const summary = turn.locator('[data-testid=used-memories-summary]');
      await summary.waitFor({ timeout: TIMEOUT });
      assert.equal((await summary.innerText()).trim(), 'Used 1 memory');
      assert.equal(await turn.locator('skald-tool-call').count(), 0, 'the recall is the line, not a row of its own');
      await summary.click();
      const link = turn.locator('[data-testid=used-memory]');
      assert.equal(await link.innerText(), 'Ada drinks green tea every morning.');
      assert.equal(await link.getAttribute('href'), `#/memories?focus=${id}`);
      assert.deepEqual(await axeViolationsInThemes(page, { screenshot: 'memory-used' }), [], 'the reply with its used memories, in both themes');

      await link.click();
      await page.locator('#main[data-page=memories]').waitFor({ timeout: TIMEOUT });
      const marked = page.locator(`[data-testid=memory-item][data-id=${id}][data-focused=true]`);
      await marked.waitFor({ timeout: TIMEOUT });
      assert.equal(await marked.locator('[data-testid=memory-text]').innerText(), 'Ada drinks green tea every morning.');
      assert.equal(await page.locator('[data-testid=memory-item][data-focused]').count(), 1, 'only that one is marked');
      const focused = await page.evaluate(() => {
        let active = document.activeElement;
        while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
        return active?.dataset.id ?? null;
      });
      assert.equal(focused, id, 'the focus is on it');
      assert.equal(await page.evaluate(() => window.location.hash), '#/memories', 'the id does not stay in the address');
      assert.ok(await marked.evaluate((el) => el.getBoundingClientRect().top >= 0 && el.getBoundingClientRect().bottom <= window.innerHeight), 'in view');
      assert.deepEqual(await axeViolationsInThemes(page, { screenshot: 'memory-focused' }), [], 'the Memory page with the memory marked, in both themes');

      // Erased since: back in the conversation, the same link says plainly it is gone.
      await api(stack.server.origin, token, 'DELETE', `/api/memories/${id}`);
      await page.goBack();
      await page.locator('#main[data-page=chat]').waitFor({ timeout: TIMEOUT });
      await page.locator('[data-testid=used-memories-summary]').click();
      await page.locator('[data-testid=used-memory]').click();
      const gone = page.locator('[data-testid=memory-focus-gone]');
      await gone.waitFor({ timeout: TIMEOUT });
      assert.equal(await gone.innerText(), 'That memory is no longer kept: it was erased, or it expired.');
      assert.equal(await page.locator('[data-testid=memory-item][data-focused]').count(), 0);

      assert.deepEqual(problems(consoleMessages), []);
      assert.deepEqual(failedResponses, [`GET /api/memories/${id} 404`], 'only the erased memory was not found');
    } finally {
      await close();
    }
  });

  test('without a memory search model the page says it searches by words only, and names people, never their ids', async () => {
    const ada = await api(stack.server.origin, token, 'GET', '/api/me');
    assert.deepEqual(await api(stack.server.origin, token, 'GET', '/api/memories/search'), { by: 'words', model: null });
    await api(stack.server.origin, token, 'POST', '/api/memories', { text: 'Bea plays the cello on Sundays.', pool: 'shared', subject: { kind: 'member', id: bea } });

    // Bea manages nothing: the way to the memory search model is named, not linked.
    const seen = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
    try {
      await logIn(seen.page, BEA, TIMEOUT);
      await seen.page.locator('[data-testid=nav-memories]').click();
      const by = seen.page.locator('[data-testid=memories-search-by]');
      await by.waitFor({ timeout: TIMEOUT });
      assert.equal(await by.getAttribute('data-by'), 'words');
      assert.equal(await by.innerText(), 'Searching by words only — an administrator can add the memory search model in Administration → Models.');
      assert.equal(await by.locator('a').count(), 0, 'no link to a page Bea cannot open');
      const cello = seen.page.locator('[data-testid=memory-item]', { hasText: 'Bea plays the cello on Sundays.' });
      await cello.waitFor({ timeout: TIMEOUT });
      assert.equal(await cello.locator('[data-testid=memory-about]').innerText(), 'About you');
      assert.equal(await cello.locator('[data-testid=memory-author]').innerText(), 'Written by Ada', 'Ada by name, though Bea cannot list people');
      assert.ok(!(await seen.page.locator('skald-memories').innerText()).includes(ada.user.id), 'no id on the page');
      assert.deepEqual(problems(seen.consoleMessages), []);
      assert.deepEqual(seen.failedResponses, []);
    } finally {
      await seen.close();
    }

    // Ada administers: the same words, with the way there a link.
    const { page, consoleMessages, failedResponses, close } = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
    try {
      await logIn(page, ADA, TIMEOUT);
      await page.locator('[data-testid=nav-memories]').click();
      const by = page.locator('[data-testid=memories-search-by]');
      await by.waitFor({ timeout: TIMEOUT });
      assert.equal(await by.innerText(), 'Searching by words only — an administrator can add the memory search model in Administration → Models.');
      const cello = page.locator('[data-testid=memory-item]', { hasText: 'Bea plays the cello on Sundays.' });
      assert.equal(await cello.locator('[data-testid=memory-about]').innerText(), 'About Bea');
      assert.equal(await cello.locator('[data-testid=memory-author]').innerText(), 'Written by you');
      await by.locator('[data-testid=memories-add-search-model]').click();
      await page.locator('#main[data-page=admin]').waitFor({ timeout: TIMEOUT });
      await page.locator('[data-testid=local-models]').waitFor({ timeout: TIMEOUT });
      assert.equal(await page.evaluate(() => window.location.hash), '#/admin/models');
      assert.deepEqual(problems(consoleMessages), []);
      assert.deepEqual(failedResponses, []);
    } finally {
      await close();
    }
  });
});
