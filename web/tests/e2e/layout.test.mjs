// The page stays put in a long conversation: the window itself never scrolls (each pane
// scrolls inside itself), and a card that arrives at the end is shown whole.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { api, logIn, openPage, problems, screenshot, seedInstance, startStack, stopStack } from './harness.mjs';

const ADA = { name: 'Ada', password: 'otter lantern quietly' };
const TIMEOUT = 20_000;
/** Turns in the long conversation: 200 messages, as a person has after a few weeks. */
const TURNS = 100;
/** The turns the page reads when it opens a conversation (`PAGE_TURNS` in skald-chat.ts). */
const SHOWN = 40;

describe('a long conversation', () => {
  let stack;
  let token;
  let long;

  before(async () => {
    stack = await startStack();
    const { setup } = await seedInstance(stack.server, stack.model, ADA);
    token = setup.token;
    ({ id: long } = await api(stack.server.origin, token, 'POST', '/api/sessions', {}));
    for (let i = 0; i < TURNS; i++) {
      await stack.model.push({ text: `Reply ${i}: a sentence long enough to take a line of the conversation.` });
      await api(stack.server.origin, token, 'POST', `/api/sessions/${long}/messages`, { text: `Question ${i}` });
      await turnsDone(long, i + 1);
    }
    // A few more conversations, for the list in a short window.
    for (let i = 0; i < 5; i++) {
      const { id } = await api(stack.server.origin, token, 'POST', '/api/sessions', {});
      await stack.model.push({ text: `Short reply ${i}` });
      await api(stack.server.origin, token, 'POST', `/api/sessions/${id}/messages`, { text: `Another question ${i}` });
      await turnsDone(id, 1);
    }
  });

  after(() => stopStack(stack));

  /** Waits until the conversation has `count` finished replies. */
  async function turnsDone(session, count) {
    const deadline = Date.now() + TIMEOUT;
    while (Date.now() < deadline) {
      const rows = await api(stack.server.origin, token, 'GET', `/api/sessions/${session}/messages`);
      if (rows.filter((row) => row.role === 'assistant' && row.status === 'done').length >= count) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`the conversation did not reach ${count} replies`);
  }

  async function openLong(viewport) {
    const opened = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
    if (viewport) await opened.page.setViewportSize(viewport);
    await logIn(opened.page, ADA, TIMEOUT);
    // A narrow window keeps the list in a drawer.
    if (await opened.page.locator('.menu').isVisible()) await opened.page.locator('.menu').click();
    await opened.page.locator(`[data-testid=session][data-id="${long}"]`).click();
    // It opens on its latest turns; the earlier ones wait above, behind a button.
    await opened.page.locator('[data-testid=turn]').nth(SHOWN - 1).waitFor({ timeout: TIMEOUT });
    await opened.page.locator('[data-testid=earlier]').waitFor({ timeout: TIMEOUT });
    assert.equal(await opened.page.locator('[data-testid=turn]').count(), SHOWN);
    return opened;
  }

  /** The card element whose shadow root holds the focus, if any. */
  const focusedCard = (page) =>
    page.evaluate(() => {
      let active = document.activeElement;
      let card = null;
      while (active?.shadowRoot) {
        if (/-card$/.test(active.tagName.toLowerCase())) card = active.tagName.toLowerCase();
        active = active.shadowRoot.activeElement;
      }
      return card;
    });

  const documentScroll = (page) => page.evaluate(() => [document.documentElement.scrollTop, document.body.scrollTop]);

  /** Turns the mouse wheel `times` over the middle of `locator`. */
  async function wheelOver(page, locator, times, delta = 400) {
    const box = await locator.boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    for (let i = 0; i < times; i++) await page.mouse.wheel(0, delta);
    // Wheel scrolling is smooth: give it time to land.
    await page.waitForTimeout(400);
  }

  test('the wheel over the sidebar or the conversation never scrolls the window', async () => {
    const { page, consoleMessages, close } = await openLong();
    try {
      await wheelOver(page, page.locator('skald-session-list'), 20);
      assert.deepEqual(await documentScroll(page), [0, 0], 'the wheel over the sidebar moved the whole app');
      const log = page.locator('[role=log]');
      const before = await log.evaluate((el) => el.scrollTop);
      await wheelOver(page, log, 10, -400);
      assert.ok((await log.evaluate((el) => el.scrollTop)) < before, 'the conversation itself scrolls back');
      assert.deepEqual(await documentScroll(page), [0, 0], 'the wheel over the conversation moved the whole app');
      // The model is named where it changed — here only on the first reply — and on hover.
      assert.equal(await page.locator('[data-testid=turn-model]').count(), 1);
      assert.match((await page.locator('.turn-meta').last().getAttribute('title')) ?? '', /Answered by scripted\//);
      // The window's own height is all the document is.
      assert.equal(await page.evaluate(() => document.documentElement.scrollHeight), await page.evaluate(() => window.innerHeight));
      await screenshot(page, 'layout-long-conversation');
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });

  test('a page longer than the window scrolls inside itself', async () => {
    const { page, close } = await openLong({ width: 800, height: 600 });
    try {
      await page.locator('[data-testid=nav-admin]').click();
      await page.locator('[data-testid=admin-tab][data-section=models]').click();
      await page.locator('[data-testid=provider-item]').first().waitFor({ timeout: TIMEOUT });
      await wheelOver(page, page.locator('skald-admin-models'), 10);
      assert.deepEqual(await documentScroll(page), [0, 0], 'the Models page moved the whole app');
    } finally {
      await close();
    }
  });

  test('a card at the end of a long conversation shows whole, its Allow in view', async () => {
    const { page, consoleMessages, close } = await openLong({ width: 1280, height: 720 });
    try {
      await stack.model.push([
        { text: 'I will note that.', tool_calls: [{ name: 'note_write', arguments: { title: 'Shopping', text: 'flour, yeast' } }] },
        { text: 'Saved.' },
      ]);
      await page.locator('[data-testid=composer]').fill('Note my shopping list: flour, yeast');
      await page.keyboard.press('Enter');
      const card = page.locator('skald-approval-card');
      await card.waitFor({ timeout: TIMEOUT });
      const allow = card.locator('[data-testid=allow]');
      // The card says what it asks in words; the exact arguments are one click away.
      assert.equal(await card.locator('[data-testid=card-sentence]').innerText(), 'Save a note titled “Shopping”: flour, yeast · for Ada');
      assert.equal(await card.locator('[data-testid=card-arguments]').isVisible(), false);
      // The page settles (the card's details, the waiting hint) before it is judged.
      await page.waitForTimeout(500);
      const log = await page.locator('[role=log]').boundingBox();
      const box = await card.boundingBox();
      assert.ok(box.y >= log.y - 1 && box.y + box.height <= log.y + log.height + 1, `the card (${box.y}–${box.y + box.height}) lies inside the conversation (${log.y}–${log.y + log.height})`);
      const allowBox = await allow.boundingBox();
      assert.ok(allowBox.y + allowBox.height <= log.y + log.height, 'Allow is in view');
      await screenshot(page, 'layout-card-in-view');
      // The card has the focus (the person was not typing), on itself: an Enter pressed as
      // it appears decides nothing.
      assert.equal(await focusedCard(page), 'skald-approval-card');
      await page.keyboard.press('Enter');
      await page.waitForTimeout(300);
      assert.equal(await card.count(), 1, 'Enter on the card itself decided nothing');
      await card.getByText('Exactly what it will send').click();
      assert.deepEqual(JSON.parse(await card.locator('[data-testid=card-arguments]').innerText()), { title: 'Shopping', text: 'flour, yeast' });
      await allow.click();
      await page.locator('[data-testid=turn]').last().and(page.locator('[data-status=done]')).waitFor({ timeout: TIMEOUT });
      // The call's row reads the same way, and its result as text.
      const call = page.locator('skald-tool-call').last();
      // The turn's end reads the history again, which may draw the row anew: open it once it is settled.
      await page.waitForTimeout(500);
      await call.locator('summary').click();
      await call.locator('[data-testid=tool-sentence]').waitFor({ timeout: TIMEOUT });
      assert.equal(await call.locator('[data-testid=tool-sentence]').innerText(), 'Save a note titled “Shopping”: flour, yeast');
      assert.doesNotMatch(await call.locator('.result').innerText(), /\\n/);
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });

  test('at 200% zoom the conversation keeps most of the window, and the drawer lists several conversations', async () => {
    // 1280×800 at 200% is a 640×400 window in CSS pixels.
    const { page, close } = await openLong({ width: 640, height: 400 });
    try {
      const log = await page.locator('[role=log]').boundingBox();
      assert.ok(log.height >= 0.6 * 400, `the conversation is ${log.height}px of 400`);
      await page.locator('.menu').click();
      await page.waitForTimeout(400);
      const rows = await page.locator('[data-testid=session]').evaluateAll((all) =>
        all.filter((el) => {
          const box = el.getBoundingClientRect();
          return box.top >= 0 && box.bottom <= window.innerHeight;
        }).length,
      );
      assert.ok(rows >= 4, `the drawer shows ${rows} conversations whole`);
      await screenshot(page, 'layout-zoom-drawer');
    } finally {
      await close();
    }
  });
});
