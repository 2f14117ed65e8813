// Reminders in the page, against the real server: a person makes a reminder for a few
// seconds from now on the Reminders page, sees when it will come in their own time, and
// sees it come as a notification in the page at its time; its history then says it was
// shown. A repeating pattern with 6 fields is refused in words before it is saved; one
// for everyone is labelled so and snoozed. The page passes axe-core in both themes and
// fits a 360-px window.
//
//   SKALD_BIN=/path/to/skald npm run test:e2e
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { api, axeViolationsInThemes, logIn, openPage, problems, seedInstance, sidewaysOverflow, startStack, stopStack } from './harness.mjs';

const ADA = { name: 'Ada', password: 'otter lantern quietly' };
const TIMEOUT = 20_000;

/** A `datetime-local` value `seconds` from now, in the browser's zone. */
async function inSeconds(page, seconds) {
  return page.evaluate((s) => {
    const when = new Date(Date.now() + s * 1000);
    const pad = (n) => String(n).padStart(2, '0');
    return `${when.getFullYear()}-${pad(when.getMonth() + 1)}-${pad(when.getDate())}T${pad(when.getHours())}:${pad(when.getMinutes())}:${pad(when.getSeconds())}`;
  }, seconds);
}

describe('reminders', () => {
  let stack;

  before(async () => {
    stack = await startStack();
    await seedInstance(stack.server, stack.model, ADA);
    await api(stack.server.origin, stack.server.token, 'POST', '/api/lock-all');
  });

  after(() => stopStack(stack));

  test('a reminder made on the page comes at its time, and its history says so', async () => {
    const { page, close, consoleMessages } = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
    try {
      await logIn(page, ADA, TIMEOUT);
      await page.locator('[data-testid=nav-reminders]').click();
      await page.locator('#main[data-page=reminders]').waitFor({ timeout: TIMEOUT });
      await page.locator('[data-testid=reminders-empty]').waitFor({ timeout: TIMEOUT });

      // A pattern with seconds is refused in words, before anything is saved.
      await page.locator('[data-testid=reminder-repeat]').check();
      await page.locator('[data-testid=reminder-cron]').fill('0 0 8 * * 1-5');
      const refused = page.locator('[data-testid=reminder-preview-error]');
      await refused.waitFor({ timeout: TIMEOUT });
      assert.match(await refused.innerText(), /5 fields/);
      await page.locator('[data-testid=reminder-cron]').fill('0 8 * * 1-5');
      await page.locator('[data-testid=reminder-preview] li').nth(2).waitFor({ timeout: TIMEOUT });

      // A repeating one for everyone: labelled as such, and snoozed for an hour. The page is
      // checked (axe in both themes, a 360-px window) with it listed, before the timed one
      // below is made, so the check cannot outlast that one's notification.
      await page.locator('[data-testid=reminder-text]').fill('Bins out');
      await page.locator('[data-testid=reminder-for]').selectOption('*');
      await page.getByText('Everyone sees it and is reminded').waitFor({ timeout: TIMEOUT });
      assert.equal(await page.locator('[data-testid=reminder-readable]').count(), 0, 'shared words are readable by all: no choice to offer');
      await page.locator('[data-testid=reminder-save]').click();
      const bins = page.locator('[data-testid=reminder]').filter({ hasText: 'Bins out' });
      await bins.locator('[data-testid=reminder-shared]').waitFor({ timeout: TIMEOUT });
      const before = await bins.locator('[data-testid=reminder-next]').innerText();
      await bins.locator('[data-testid=reminder-snooze]').selectOption('1h');
      await page.getByText('Snoozed: next').waitFor({ state: 'attached', timeout: TIMEOUT });
      const deadline = Date.now() + TIMEOUT;
      while ((await bins.locator('[data-testid=reminder-next]').innerText()) === before) {
        assert.ok(Date.now() < deadline, 'the snoozed reminder shows its new next time');
        await page.waitForTimeout(50);
      }
      const found = await axeViolationsInThemes(page, { screenshot: 'reminders' });
      await page.setViewportSize({ width: 360, height: 720 });
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => resolve())));
      for (const o of await sidewaysOverflow(page)) found.push(`360 px: ${o}`);
      await page.setViewportSize({ width: 1280, height: 800 });
      assert.deepEqual(found, [], 'accessibility or layout problems on the Reminders page');

      // Once, a few seconds from now: the preview shows that time, and the list its next time.
      const words = 'Turn the oven off';
      await page.locator('[data-testid=reminder-once]').check();
      await page.locator('[data-testid=reminder-text]').fill(words);
      await page.locator('[data-testid=reminder-at]').fill(await inSeconds(page, 6));
      await page.locator('[data-testid=reminder-preview] li').first().waitFor({ timeout: TIMEOUT });
      await page.locator('[data-testid=reminder-save]').click();
      const row = page.locator('[data-testid=reminder]').filter({ hasText: words });
      await row.waitFor({ timeout: TIMEOUT });
      assert.match(await row.locator('[data-testid=reminder-next]').innerText(), /next/);

      // It comes as a notification in the page.
      const toast = page.locator('[data-testid=toast]').filter({ hasText: words });
      await toast.waitFor({ timeout: TIMEOUT });
      assert.match(await toast.innerText(), /Reminder/);

      // A task, run by the agent chosen for it.
      await page.locator('[data-testid=kind-task]').check();
      await page.locator('[data-testid=reminder-agent] option[value=main]').waitFor({ state: 'attached', timeout: TIMEOUT });
      await page.locator('[data-testid=reminder-agent]').selectOption('main');
      await page.locator('[data-testid=reminder-text]').fill('Sum up the week');
      await page.locator('[data-testid=reminder-repeat]').check();
      await page.locator('[data-testid=reminder-save]').click();
      const task = page.locator('[data-testid=reminder]').filter({ hasText: 'Sum up the week' });
      assert.match(await task.locator('[data-testid=reminder-task]').innerText({ timeout: TIMEOUT }), /main/);

      await page.locator('[data-testid=nav-notes]').click();
      await page.locator('[data-testid=nav-reminders]').click();
      const again = page.locator('[data-testid=reminder]').filter({ hasText: words });
      await again.locator('[data-testid=reminder-history]').click();
      const runs = again.locator('[data-testid=reminder-runs] li');
      await runs.first().waitFor({ timeout: TIMEOUT });
      assert.equal(await runs.count(), 1);
      assert.equal(await runs.first().getAttribute('data-status'), 'done');
      assert.match(await again.locator('[data-testid=reminder-next]').innerText(), /done/);
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });
});
