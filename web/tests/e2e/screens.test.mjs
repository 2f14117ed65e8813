// Screenshots to be looked at (issue 24): the chat — a conversation of a few replies, a
// code block and a card waiting — the administration's People and Models pages, and the
// Memory page, at
// 1280×800, 800×600 and 200% zoom (a 640×400 window drawn at twice the scale), each in the
// light and the dark theme, saved as web/test-output/screens/<page>-<size>-<theme>.png.
// Each one must also hold what a person needs: the window itself never scrolls, nothing
// is pushed sideways, the chat keeps its composer and the whole waiting card in view (in
// the conversation's own pane, not under its header), and an administration page its
// title and the link to the page it is on; the Memory page its title.
//
//   SKALD_BIN=/path/to/skald node --test tests/e2e/screens.test.mjs
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { api, logIn, openPage, problems, screenshot, seedInstance, sidewaysOverflow, startStack, stopStack } from './harness.mjs';

const ADA = { name: 'Ada', password: 'otter lantern quietly' };
const BEA = { name: 'Bea', password: 'maple harbour violin' };
const TIMEOUT = 20_000;
const SIZES = [
  { size: '1280x800', viewport: { width: 1280, height: 800 } },
  { size: '800x600', viewport: { width: 800, height: 600 } },
  { size: 'zoom200', viewport: { width: 640, height: 400 }, deviceScaleFactor: 2 },
];
const THEMES = ['light', 'dark'];

const REPLIES = [
  ['What should I pack for two days of walking?', 'For two days you need little:\n\n- **boots** already worn in\n- a rain jacket\n- water and something salty\n\nPack the heavy things close to your back.'],
  ['How do I count the lines of a file?', 'Use `wc`:\n\n```sh\nwc -l notes.txt\n```\n\nIt prints the count and the name of the file.'],
];

/** Where an element lies against the window, as [top, bottom, left, right], or null when it is not drawn. */
const BOX = (el) => {
  const box = el.getBoundingClientRect();
  return box.width === 0 ? null : [box.top, box.bottom, box.left, box.right];
};

describe('screenshots of the chat and the administration', () => {
  let stack;
  let chat;

  before(async () => {
    stack = await startStack();
    const { setup } = await seedInstance(stack.server, stack.model, ADA, [[BEA, 'member']]);
    await api(stack.server.origin, setup.token, 'POST', '/api/users', { name: 'Cy', role: 'restricted' });
    const { origin } = stack.server;
    ({ id: chat } = await api(origin, setup.token, 'POST', '/api/sessions', {}));
    for (const [i, [text, reply]] of REPLIES.entries()) {
      await stack.model.push({ text: reply });
      await api(origin, setup.token, 'POST', `/api/sessions/${chat}/messages`, { text });
      const deadline = Date.now() + TIMEOUT;
      for (;;) {
        const rows = await api(origin, setup.token, 'GET', `/api/sessions/${chat}/messages`);
        if (rows.filter((row) => row.role === 'assistant' && row.status === 'done').length > i) break;
        assert.ok(Date.now() < deadline, `reply ${i} did not end`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    // The last turn asks before it writes: its card waits for Ada.
    await stack.model.push([
      { text: 'I will keep that as a note.', tool_calls: [{ name: 'note_write', arguments: { title: 'Walk', text: 'boots, rain jacket, water' } }] },
      { text: 'Saved.' },
    ]);
    await api(origin, setup.token, 'POST', `/api/sessions/${chat}/messages`, { text: 'Note the packing list for me.' });
    for (const [text, pool, kind] of [
      ['Ada walks two days every spring, boots already worn in.', 'private', 'self'],
      ['The spare key is under the blue flowerpot by the back door.', 'shared', 'instance'],
    ]) {
      await api(origin, setup.token, 'POST', '/api/memories', { text, pool, subject: { kind } });
    }
  });

  after(() => stopStack(stack));

  /** Draws the page in `theme`, saves it, and returns what is wrong with how it lies in the window. */
  async function shoot(page, name, theme) {
    await page.emulateMedia({ colorScheme: theme });
    await page.waitForFunction((t) => document.documentElement.dataset.theme === t, theme, { timeout: TIMEOUT });
    // The pointer rests in the top right corner, hovering nothing, as a person's hand off the mouse.
    await page.mouse.move(page.viewportSize().width - 2, 2);
    // The drawer's slide and smooth scrolling land before the picture.
    await page.waitForTimeout(300);
    await screenshot(page, `screens/${name}-${theme}`);
    const found = (await sidewaysOverflow(page)).map((o) => `${name}-${theme}: ${o}`);
    const scroll = await page.evaluate(() => ({
      top: document.documentElement.scrollTop + document.body.scrollTop,
      height: document.documentElement.scrollHeight,
      window: window.innerHeight,
    }));
    if (scroll.top !== 0 || scroll.height > scroll.window) found.push(`${name}-${theme}: the window scrolls (${scroll.height}px tall in ${scroll.window}px, at ${scroll.top})`);
    return found;
  }

  /** Whether `locator` lies whole inside the window and, if given, inside the box of `pane`. */
  async function inView(page, locator, pane) {
    const box = await locator.evaluate(BOX);
    const { width, height } = page.viewportSize();
    const [top, bottom, left, right] = pane ? await pane.evaluate(BOX) : [0, height, 0, width];
    const within = (b, t, bt, l, r) => b !== null && b[0] >= t - 1 && b[1] <= bt + 1 && b[2] >= l - 1 && b[3] <= r + 1;
    return within(box, 0, height, 0, width) && within(box, top, bottom, left, right);
  }

  for (const { size, viewport, deviceScaleFactor } of SIZES) {
    test(`at ${size}: the chat, People, Models and Memory`, async () => {
      const { page, consoleMessages, close } = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`, { viewport, deviceScaleFactor });
      try {
        await logIn(page, ADA, TIMEOUT);
        const menu = page.locator('.menu');
        if (await menu.isVisible()) await menu.click();
        await page.locator(`[data-testid=session][data-id="${chat}"]`).click();
        const allow = page.locator('skald-approval-card [data-testid=allow]');
        await allow.waitFor({ timeout: TIMEOUT });
        await page.locator('[data-testid=assistant-message] pre code').first().waitFor({ timeout: TIMEOUT });
        const found = [];
        for (const theme of THEMES) {
          found.push(...(await shoot(page, `chat-${size}`, theme)));
          const log = page.locator('[role=log]');
          for (const [what, locator, pane] of [
            ['the composer', page.locator('[data-testid=composer]')],
            ['the last message, the waiting card', page.locator('skald-approval-card section.card'), log],
            ['the card’s Allow', allow, log],
          ]) {
            if (!(await inView(page, locator, pane))) found.push(`chat-${size}-${theme}: ${what} is not in view`);
          }
        }

        for (const [section, loaded] of [
          ['people', '[data-testid=person-row]'],
          ['models', '[data-testid=provider-item]'],
        ]) {
          await page.evaluate((hash) => {
            window.location.hash = hash;
          }, `#/admin/${section}`);
          await page.locator(loaded).first().waitFor({ timeout: TIMEOUT });
          for (const theme of THEMES) {
            found.push(...(await shoot(page, `${section}-${size}`, theme)));
            if (!(await inView(page, page.locator('#admin-title')))) found.push(`${section}-${size}-${theme}: the page's title is not in view`);
            const tab = page.locator(`[data-testid=admin-tab][data-section=${section}]`);
            if (!(await inView(page, tab))) found.push(`${section}-${size}-${theme}: the link to this page is not in view`);
          }
        }
        await page.evaluate(() => {
          window.location.hash = '#/memories';
        });
        await page.locator('[data-testid=memory-item]').nth(1).waitFor({ timeout: TIMEOUT });
        for (const theme of THEMES) {
          found.push(...(await shoot(page, `memories-${size}`, theme)));
          if (!(await inView(page, page.locator('#memories-title')))) found.push(`memories-${size}-${theme}: the page's title is not in view`);
        }
        await page.emulateMedia({ colorScheme: 'light' });
        assert.deepEqual(found, [], `what is wrong at ${size}`);
        assert.deepEqual(problems(consoleMessages), []);
      } finally {
        await close();
      }
    });
  }
});
