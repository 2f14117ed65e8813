// Model output rendered in Chromium (DOMPurify needs a real DOM): a citation of a document's
// page stays a link that opens the Files page in this window, and every other address
// inside the app — or anything dressed up to look like a citation — is still text, while
// web links still open outside the app. tests/e2e/render.test.mjs checks the same rules
// against hostile output from a real model turn.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { componentFixture } from '../../tests/mount.mjs';

const ID = 'doc_0123456789abcdef01234567';

describe('links in model output', () => {
  const { page } = componentFixture(['markdown/render.ts', 'components/skald-markdown/skald-markdown.ts']);

  /** Every link `markdown` renders to: its address, target, rel and words. */
  const links = (markdown) =>
    page.evaluate((markdown) => {
      const template = document.createElement('template');
      template.innerHTML = window.skald['markdown/render.ts'].renderMarkdown(markdown);
      return [...template.content.querySelectorAll('a')].map((a) => ({
        href: a.getAttribute('href'),
        target: a.getAttribute('target'),
        rel: a.getAttribute('rel'),
        text: a.textContent,
      }));
    }, markdown);

  test('a citation of a document, or of one of its pages, stays a link in this window', async () => {
    assert.deepEqual(await links(`See [notes.txt, p. 2](#/files/${ID}?page=2) and [the whole file](#/files/${ID}).`), [
      { href: `#/files/${ID}?page=2`, target: null, rel: null, text: 'notes.txt, p. 2' },
      { href: `#/files/${ID}`, target: null, rel: null, text: 'the whole file' },
    ]);
  });

  test('web links still open outside the app', async () => {
    assert.deepEqual(await links('[a page](https://example.invalid/page) and [mail](mailto:ada@example.invalid)'), [
      { href: 'https://example.invalid/page', target: '_blank', rel: 'noopener noreferrer', text: 'a page' },
      { href: 'mailto:ada@example.invalid', target: '_blank', rel: 'noopener noreferrer', text: 'mail' },
    ]);
  });

  test('any other address in the app, or one that only looks like a citation, is text', async () => {
    const hostile = [
      '[admin](#/admin)',
      '[people](#/admin/people)',
      '[files](#/files)',
      '[made-up id](#/files/doc_notes)',
      `[another query](#/files/${ID}?page=1&focus=x)`,
      `[page zero](#/files/${ID}?page=0)`,
      `[quoted](<#/files/${ID}"onclick="alert(1)>)`,
      `[spaced](<#/files/${ID} ?page=1>)`,
      `[js](javascript:location='#/files/${ID}')`,
      '[relative](/api/health)',
      `<a href="#/files/${ID}" onclick="alert(1)">raw</a>`,
      `[ref][r]\n\n[r]: #/admin`,
    ];
    for (const markdown of hostile) {
      const found = await links(markdown);
      assert.deepEqual(
        found.filter((link) => link.href !== null),
        [],
        `${markdown} → ${JSON.stringify(found)}`,
      );
    }
    const raw = await page.evaluate((id) => {
      const template = document.createElement('template');
      template.innerHTML = window.skald['markdown/render.ts'].renderMarkdown(`<a href="#/files/${id}" onclick="alert(1)">raw</a>`);
      return { elements: [...template.content.querySelectorAll('*')].map((e) => e.localName), text: template.content.textContent.trim() };
    }, ID);
    assert.deepEqual(raw, { elements: ['p'], text: `<a href="#/files/${ID}" onclick="alert(1)">raw</a>` }, 'raw HTML is shown as text');
  });

  test('clicking a citation moves this window to it; a web link does not', async () => {
    await page.evaluate(async (id) => {
      history.replaceState(null, '', '#/');
      const element = document.createElement('skald-markdown');
      element.text = `[notes.txt, p. 3](#/files/${id}?page=3)`;
      document.body.append(element);
      await element.updateComplete;
    }, ID);
    const popups = [];
    page.context().on('page', (popup) => popups.push(popup));
    await page.locator('skald-markdown a').click();
    assert.equal(await page.evaluate(() => location.hash), `#/files/${ID}?page=3`);
    assert.deepEqual(popups, [], 'no other window opened');
  });
});
