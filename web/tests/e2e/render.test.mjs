// Model output is untrusted (a reply can carry what a web page put in front of the
// model): rendered as Markdown it must load nothing, run nothing and offer no
// javascript: link. A "leak" server on its own port counts every request that reaches it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';

import {
  api,
  openPage,
  problems,
  screenshot,
  seedInstance,
  startStack,
  stopStack,
} from './harness.mjs';

const ADA = { name: 'Ada', password: 'otter lantern quietly' };

describe('model output is rendered safely', () => {
  let server;
  let model;
  let browser;
  let root;
  let leak;
  /** @type {string[]} */
  const leaked = [];

  before(async () => {
    leak = createServer((request, response) => {
      leaked.push(request.url ?? '');
      response.writeHead(200, { 'Content-Type': 'text/plain' });
      response.end('leaked');
    });
    await new Promise((resolve) => leak.listen(0, '127.0.0.1', resolve));
    ({ root, server, model, browser } = await startStack());
    const { setup } = await seedInstance(server, model, ADA);
    await api(server.origin, setup.token, 'POST', '/api/logout');
  });

  after(async () => {
    await stopStack({ root, server, model, browser });
    await new Promise((resolve) => leak?.close(resolve));
  });

  test('images, raw HTML, scripts, frames and javascript: links in a reply load and run nothing', async () => {
    const port = leak.address().port;
    const base = `http://127.0.0.1:${port}`;
    const hostile = [
      'Here is the picture:',
      '',
      `![x](${base}/leak)`,
      '',
      `<img src="${base}/img" onerror="window.__pwned = 'img'">`,
      '',
      `<script>window.__pwned = 'script'</script>`,
      '',
      `<iframe src="${base}/frame"></iframe>`,
      '',
      `<svg onload="window.__pwned = 'svg'"><image href="${base}/svg"/></svg>`,
      '',
      `<style>body { background: url(${base}/css) }</style>`,
      '',
      '[click me](javascript:window.__pwned=%22link%22)',
      '',
      `<a href="javascript:window.__pwned='raw'">raw link</a>`,
      '',
      '[relative](/api/health) and [a page](https://example.invalid/page)',
      '',
      `Inline ![y](${base}/inline) image and a [reference][r].`,
      '',
      `[r]: javascript:window.__pwned='ref'`,
    ].join('\n');
    await model.push({ text: hostile, chunk_chars: 7, delay_ms: 2 });

    const { page, consoleMessages, close } = await openPage(browser, `${server.origin}/#token=${server.token}`);
    /** @type {string[]} */
    const requested = [];
    page.on('request', (request) => {
      if (request.url().includes(`:${port}`)) requested.push(request.url());
    });
    try {
      await page.locator(`[data-testid=person][data-name=${ADA.name}]`).click();
      await page.locator('#password').fill(ADA.password);
      await page.keyboard.press('Enter');
      await page.locator('[data-testid=composer]').fill('Show me the picture');
      await page.keyboard.press('Enter');
      await page.locator('[data-testid=turn][data-status=done]').waitFor({ timeout: 20_000 });
      // Let anything that would load, load.
      await page.waitForTimeout(750);
      await screenshot(page, 'render-hostile-output');

      const found = await page.evaluate(() => {
        const all = [];
        const walk = (root) => {
          for (const element of root.querySelectorAll('*')) {
            all.push(element);
            if (element.shadowRoot) walk(element.shadowRoot);
          }
        };
        walk(document);
        const message = all.filter((e) => e.getAttribute('data-testid') === 'assistant-message').pop();
        const inside = [];
        const walkInside = (root) => {
          for (const element of root.querySelectorAll('*')) {
            inside.push(element);
            if (element.shadowRoot) walkInside(element.shadowRoot);
          }
        };
        if (message) walkInside(message);
        const tags = (name) => inside.filter((e) => e.localName === name).length;
        return {
          pwned: window.__pwned ?? null,
          text: inside.filter((e) => e.classList.contains('md')).map((e) => e.textContent).join('\n'),
          img: tags('img'),
          script: tags('script'),
          iframe: tags('iframe'),
          svg: tags('svg'),
          style: tags('style'),
          javascriptLinks: all.filter((e) => /^\s*javascript:/i.test(e.getAttribute('href') ?? '')).length,
          links: inside
            .filter((e) => e.localName === 'a')
            .map((a) => ({ href: a.getAttribute('href'), target: a.getAttribute('target'), rel: a.getAttribute('rel'), text: a.textContent })),
        };
      });

      assert.equal(found.pwned, null, 'no script ran');
      assert.deepEqual(leaked, [], 'nothing reached the leak server');
      assert.deepEqual(requested, [], 'the page requested nothing from the leak server');
      assert.equal(found.img, 0, 'no img element');
      assert.equal(found.script, 0, 'no script element');
      assert.equal(found.iframe, 0, 'no iframe element');
      assert.equal(found.svg, 0, 'no svg from the reply');
      assert.equal(found.style, 0, 'no style element from the reply');
      assert.equal(found.javascriptLinks, 0, 'no javascript: link anywhere on the page');
      // Raw HTML is shown as text, so the person sees what the model wrote.
      assert.match(found.text, /<script>window.__pwned/);
      assert.match(found.text, /<img src=/);
      // Links that stay are absolute http(s) and open outside the app.
      for (const link of found.links.filter((l) => l.href !== null)) {
        assert.match(link.href, /^(https?:|mailto:)/, `link ${link.href}`);
        assert.equal(link.target, '_blank');
        assert.equal(link.rel, 'noopener noreferrer');
      }
      assert.ok(found.links.some((l) => l.href === 'https://example.invalid/page'), 'a web link survives');
      assert.ok(!found.links.some((l) => l.href === '/api/health'), 'a relative link does not lead into the app');
      assert.deepEqual(problems(consoleMessages), [], 'no console errors or CSP reports');
    } finally {
      await close();
    }
  });
});
