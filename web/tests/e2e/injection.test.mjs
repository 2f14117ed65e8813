// The injection corpus's rendered side (issue 31): what an attacker wants an answer to
// show (tests/injection/corpus.json's `render`, and every payload quoted back whole) comes
// as assistant replies through the real server, and the page must fetch nothing for it.
// Every request the page makes is recorded through the browser's own protocol (CDP
// Network events, which see prefetches, pings and frames too); an attacker's listener on
// another port counts whatever reaches it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

import { api, openPage, problems, screenshot, seedInstance, startStack, stopStack } from './harness.mjs';

const ADA = { name: 'Ada', password: 'otter lantern quietly' };
const CORPUS = new URL('../../../tests/injection/corpus.json', import.meta.url);

describe('the injection corpus, rendered', () => {
  let server;
  let model;
  let browser;
  let root;
  let attacker;
  /** @type {string[]} */
  const reached = [];

  before(async () => {
    attacker = createServer((request, response) => {
      reached.push(request.url ?? '');
      response.writeHead(200, { 'Content-Type': 'image/gif' });
      response.end('GIF89a');
    });
    await new Promise((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    ({ root, server, model, browser } = await startStack());
    const { setup } = await seedInstance(server, model, ADA);
    await api(server.origin, setup.token, 'POST', '/api/logout');
  });

  after(async () => {
    await stopStack({ root, server, model, browser });
    await new Promise((resolve) => attacker?.close(resolve));
  });

  test("no reply the corpus makes gets the page to fetch anything but the app's own", async () => {
    const base = `http://127.0.0.1:${attacker.address().port}`;
    const corpus = JSON.parse(readFileSync(CORPUS, 'utf8').replaceAll('{ATTACKER}', base));
    const replies = corpus.filter((entry) => entry.render).map((entry) => entry.render);
    // A model that quotes what it read shows every payload as it came.
    replies.push(corpus.map((entry) => entry.payload).join('\n\n'));
    assert.ok(replies.length >= 10, `the corpus has things to render: ${replies.length}`);
    await model.push(replies.map((text) => ({ text, chunk_chars: 40 })));

    const { page, context, consoleMessages, close } = await openPage(browser, `${server.origin}/#token=${server.token}`);
    /** @type {{ url: string, type: string, after: boolean }[]} */
    const requests = [];
    let rendered = false;
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    cdp.on('Network.requestWillBeSent', (event) => {
      requests.push({ url: event.request.url, type: event.type ?? '', after: rendered });
    });
    let popups = 0;
    context.on('page', () => popups++);
    try {
      await page.locator(`[data-testid=person][data-name=${ADA.name}]`).click();
      await page.locator('#password').fill(ADA.password);
      await page.keyboard.press('Enter');
      for (const [n] of replies.entries()) {
        await page.locator('[data-testid=composer]').fill(`What did it say, part ${n + 1}?`);
        await page.keyboard.press('Enter');
        await page.locator('[data-testid=turn][data-status=done]').nth(n).waitFor({ timeout: 20_000 });
      }
      rendered = true;
      // Let anything that would load, refresh or follow itself, do so.
      await page.waitForTimeout(1500);
      await screenshot(page, 'injection-corpus-rendered');

      const found = await page.evaluate((attackerBase) => {
        const all = [];
        const walk = (root) => {
          for (const element of root.querySelectorAll('*')) {
            all.push(element);
            if (element.shadowRoot) walk(element.shadowRoot);
          }
        };
        walk(document);
        // Everything inside the replies, their shadow roots included.
        const inside = [];
        const walkInside = (root) => {
          for (const element of root.querySelectorAll('*')) {
            inside.push(element);
            if (element.shadowRoot) walkInside(element.shadowRoot);
          }
        };
        for (const message of all.filter((e) => e.getAttribute('data-testid') === 'assistant-message')) walkInside(message);
        const loading = ['img', 'iframe', 'frame', 'object', 'embed', 'video', 'audio', 'source', 'picture', 'input', 'link', 'meta', 'svg', 'image', 'script', 'style', 'base'];
        return {
          loaders: inside.filter((e) => loading.includes(e.localName)).map((e) => e.outerHTML.slice(0, 120)),
          styled: inside.filter((e) => /url\(/i.test(e.getAttribute('style') ?? '')).length,
          attackerLinks: all
            .filter((e) => e.localName === 'a' && (e.getAttribute('href') ?? '').startsWith(attackerBase))
            .map((a) => ({ href: a.getAttribute('href'), target: a.getAttribute('target'), rel: a.getAttribute('rel'), ping: a.getAttribute('ping') })),
          text: inside.filter((e) => e.classList.contains('md')).map((e) => e.textContent).join('\n'),
          url: location.href,
        };
      }, base);

      const foreign = requests.filter((r) => !r.url.startsWith(`${server.origin}/`) && !r.url.startsWith('data:'));
      assert.deepEqual(foreign, [], 'every request the page made went to its own origin');
      const later = requests.filter((r) => r.after).map((r) => new URL(r.url).pathname);
      assert.deepEqual(later.filter((p) => !p.startsWith('/api/') && !p.startsWith('/assets/')), [], `after the replies, only the app's API and assets: ${later}`);
      assert.deepEqual(reached, [], "nothing reached the attacker's listener");
      assert.deepEqual(found.loaders, [], 'nothing in a reply can load anything');
      assert.equal(found.styled, 0, 'no style in a reply names a url()');
      assert.equal(found.url.split('#')[0], `${server.origin}/`, 'the page went nowhere');
      assert.equal(popups, 0, 'no window opened');
      // The attacker's words are shown as text, so the person sees what was attempted.
      assert.match(found.text, /<img src=/);
      assert.match(found.text, /http-equiv/);
      // A link to the attacker that is shown is followed only by a click, away from the app.
      for (const link of found.attackerLinks) {
        assert.equal(link.target, '_blank', link.href);
        assert.equal(link.rel, 'noopener noreferrer', link.href);
        assert.equal(link.ping, null, link.href);
      }
      assert.deepEqual(problems(consoleMessages), [], 'no console errors or CSP reports');
      console.log(`rendered ${replies.length} replies; ${requests.length} requests, all to ${server.origin}; ${found.attackerLinks.length} attacker links shown, none followed`);
    } finally {
      await close();
    }
  });
});
