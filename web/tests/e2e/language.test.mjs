// The page's language, as people use it: before anyone logs in it speaks the browser's;
// a person picks another on My data and the whole page changes at once, without a reload;
// the choice is kept in their settings, so it is back at their next login, and another
// person still gets their own.
//
//   SKALD_BIN=/path/to/skald node --test tests/e2e/language.test.mjs
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { api, axeViolationsInThemes, logIn as logInAs, openPage, problems, screenshot, seedInstance, startStack, stopStack } from './harness.mjs';

const ADA = { name: 'Ada', password: 'otter lantern quietly' };
const BEA = { name: 'Bea', password: 'maple harbour violin' };
const TIMEOUT = 20_000;

const logIn = (page, person) => logInAs(page, person, TIMEOUT);
const lang = (page) => page.evaluate(() => document.documentElement.lang);

/** The label of the My data link in the navigation, which every page shows. */
const dataLink = (page) => page.locator('[data-testid=nav-data]').innerText();

async function openMyData(page) {
  await page.evaluate(() => {
    window.location.hash = '#/data';
  });
  await page.locator('[data-testid=language]').waitFor({ timeout: TIMEOUT });
}

describe('the language of the page', () => {
  let stack;
  let ada;
  let bea;

  before(async () => {
    stack = await startStack();
    await seedInstance(stack.server, stack.model, ADA, [[BEA, 'member']]);
    await api(stack.server.origin, stack.server.token, 'POST', '/api/lock-all');
    ada = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
    bea = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
  });

  after(async () => {
    await ada?.close();
    await bea?.close();
    await stopStack(stack ?? {});
  });

  test('before login the page speaks the browser’s language', async () => {
    const context = await stack.browser.newContext({ locale: 'it-IT' });
    try {
      const page = await context.newPage();
      await page.goto(`${stack.server.origin}/#token=${stack.server.token}`);
      await page.locator('[data-testid=person]').first().waitFor({ timeout: TIMEOUT });
      assert.equal(await page.locator('skald-login h1').innerText(), 'Chi sta usando Skald?');
      assert.equal(await lang(page), 'it-IT');
    } finally {
      await context.close();
    }
    await ada.page.locator('[data-testid=person]').first().waitFor({ timeout: TIMEOUT });
    assert.equal(await ada.page.locator('skald-login h1').innerText(), 'Who is using Skald?');
  });

  test('a person switches to French and sees the page in French at once', async () => {
    const p = ada.page;
    await logIn(p, ADA);
    await openMyData(p);
    assert.equal(await dataLink(p), 'My data');
    // Whatever survives on window proves the page was not reloaded (a reload would lose the session).
    await p.evaluate(() => {
      window.notReloaded = true;
    });
    await p.locator('[data-testid=language]').selectOption('fr');
    await p.locator('[data-testid=language-saved]').waitFor({ timeout: TIMEOUT });
    assert.equal(await p.locator('[data-testid=language-saved]').innerText(), 'Skald affiche désormais ses pages en français.');
    assert.equal(await dataLink(p), 'Mes données');
    assert.equal(await p.locator('skald-my-data h2').innerText(), 'Mes données');
    assert.equal(await p.locator('[data-testid=lock]').innerText(), 'Verrouiller');
    assert.equal(await p.locator('[data-testid=language]').inputValue(), 'fr');
    assert.equal(await lang(p), 'fr');
    assert.equal(await p.evaluate(() => window.notReloaded), true);
    assert.deepEqual(await axeViolationsInThemes(p), []);
    await screenshot(p, 'language-my-data-fr');
    // The conversation page too, which was not on screen when the language changed.
    await p.evaluate(() => {
      window.location.hash = '';
    });
    await p.locator('[data-testid=composer]').waitFor({ timeout: TIMEOUT });
    assert.equal(await p.locator('[data-testid=composer]').getAttribute('placeholder'), 'Écris un message…');
  });

  test('the choice outlives the login: French again after logging out and back in', async () => {
    const p = ada.page;
    await p.locator('[data-testid=lock]').click();
    await p.locator('[data-testid=person]').first().waitFor({ timeout: TIMEOUT });
    // The picker is nobody's yet: it speaks the browser's language.
    assert.equal(await p.locator('skald-login h1').innerText(), 'Who is using Skald?');
    assert.match(await lang(p), /^en/);
    await logIn(p, ADA);
    assert.equal(await dataLink(p), 'Mes données');
    assert.equal(await lang(p), 'fr');
    await openMyData(p);
    assert.equal(await p.locator('[data-testid=language]').inputValue(), 'fr');
  });

  test('another person still has English', async () => {
    const p = bea.page;
    await p.locator('[data-testid=person]').first().waitFor({ timeout: TIMEOUT });
    await logIn(p, BEA);
    assert.equal(await dataLink(p), 'My data');
    assert.match(await lang(p), /^en/);
    await openMyData(p);
    assert.equal(await p.locator('[data-testid=language]').inputValue(), 'system');
  });

  test('going back to the browser’s language is a choice too', async () => {
    const p = ada.page;
    await openMyData(p);
    await p.locator('[data-testid=language]').selectOption('system');
    await p.locator('[data-testid=language-saved]').waitFor({ timeout: TIMEOUT });
    assert.equal(await p.locator('[data-testid=language-saved]').innerText(), 'Skald now shows its pages in English.');
    assert.equal(await dataLink(p), 'My data');
  });

  test('nothing went wrong in the pages', () => {
    assert.deepEqual(problems(ada.consoleMessages), []);
    assert.deepEqual(problems(bea.consoleMessages), []);
  });
});
