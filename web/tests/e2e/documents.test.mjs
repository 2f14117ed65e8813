// Documents on the Files page, against the real server: a text file and a Markdown file
// uploaded through the file field are listed and read; the Markdown opens rendered; search
// finds the text file's words with a snippet that links to its page; a PDF written here by
// hand opens in pdf.js with its first page drawn and its words in the text layer, and its
// second page a click away; deleting asks first. The page passes axe-core in both themes
// and fits a 360-px window, and the page logs no error or CSP violation throughout.
// In a conversation: a text file attached by the composer goes to the model with the
// message, inside the outside-content wrapper; the message shows the words and a link to
// the file, not the file's text; and the reply's citation of a page opens it on the Files
// page.
//
//   SKALD_BIN=/path/to/skald node --test tests/e2e/documents.test.mjs
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { axeViolationsInThemes, logIn, openPage, problems, screenshot, seedInstance, sidewaysOverflow, startStack, stopStack } from './harness.mjs';
import { tinyPdf } from './pdf.mjs';

const ADA = { name: 'Ada', password: 'otter lantern quietly' };
const TIMEOUT = 20_000;

describe('documents', () => {
  let stack;

  before(async () => {
    stack = await startStack();
    await seedInstance(stack.server, stack.model, ADA);
  });

  after(() => stopStack(stack));

  test('upload, list, read, search, open a PDF and delete on the Files page', async () => {
    const { page, consoleMessages, failedResponses, close } = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
    try {
      await logIn(page, ADA, TIMEOUT);
      await page.locator('[data-testid=nav-files]').click();
      await page.locator('#main[data-page=files]').waitFor({ timeout: TIMEOUT });
      await page.locator('[data-testid=files-empty]').waitFor({ timeout: TIMEOUT });

      // Two files through the file field, into Ada's own pool (the default).
      assert.equal(await page.locator('[data-testid=files-pool-private]').isChecked(), true);
      await page.locator('[data-testid=files-input]').setInputFiles([
        { name: 'pantry.txt', mimeType: 'text/plain', buffer: Buffer.from('Buy saffron and cardamom for the winter bread.\n') },
        { name: 'recipe.md', mimeType: 'text/markdown', buffer: Buffer.from('# Winter bread\n\nKnead **gently**, then rest an hour.\n') },
      ]);
      const file = (name) => page.locator('[data-testid=file]').filter({ has: page.locator('[data-testid=file-open]', { hasText: name }) });
      for (const name of ['pantry.txt', 'recipe.md']) {
        await file(name).waitFor({ timeout: TIMEOUT });
        // Read in the background; the page asks after it until it is.
        await file(name).and(page.locator('[data-status=ready]')).waitFor({ timeout: TIMEOUT });
        assert.equal(await file(name).locator('[data-testid=file-status]').innerText(), 'Ready');
        assert.equal(await file(name).getAttribute('data-pool'), 'private');
        assert.equal(await file(name).locator('[data-testid=file-shared]').count(), 0);
      }
      assert.match(await file('pantry.txt').locator('.facts').innerText(), /^Text · \d+ bytes · /);
      assert.equal(await page.locator('[data-testid=upload]').count(), 0, 'both uploads finished');

      const found = await axeViolationsInThemes(page, { screenshot: 'files' });
      await page.setViewportSize({ width: 360, height: 720 });
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => resolve())));
      for (const o of await sidewaysOverflow(page)) found.push(`360 px: ${o}`);
      await page.setViewportSize({ width: 1280, height: 800 });
      assert.deepEqual(found, [], 'accessibility or layout problems on the Files page');

      // The Markdown opens rendered.
      await file('recipe.md').locator('[data-testid=file-open]').click();
      const markdown = page.locator('[data-testid=document-markdown]');
      await markdown.locator('h1').waitFor({ timeout: TIMEOUT });
      assert.equal(await markdown.locator('h1').innerText(), 'Winter bread');
      assert.equal(await markdown.locator('strong').innerText(), 'gently');
      assert.match(await page.evaluate(() => location.hash), /^#\/files\/[A-Za-z0-9_-]+$/, 'the address names the document by id, never by name');
      await page.locator('[data-testid=document-back]').click();

      // Search finds the text file's words, marked, and the hit opens its page.
      await page.locator('[data-testid=files-search]').fill('cardamom');
      const hit = page.locator('[data-testid=file-hit]');
      await hit.first().waitFor({ timeout: TIMEOUT });
      assert.equal(await hit.count(), 1);
      assert.match(await hit.innerText(), /pantry\.txt/);
      assert.equal(await hit.locator('mark').first().innerText(), 'cardamom');
      assert.doesNotMatch(await hit.innerText(), /\*\*/);
      assert.match(await hit.getAttribute('href'), /^#\/files\/[A-Za-z0-9_-]+\?page=1$/);
      await hit.click();
      await page.locator('[data-testid=document-text]').filter({ hasText: 'Buy saffron and cardamom' }).waitFor({ timeout: TIMEOUT });
      await page.locator('[data-testid=document-back]').click();
      await page.locator('[data-testid=files-search]').fill('');

      // A PDF written here: pdf.js draws page 1 and lays its words over it.
      await page.locator('[data-testid=files-input]').setInputFiles({ name: 'menu.pdf', mimeType: 'application/pdf', buffer: tinyPdf(['Café crème', 'second page']) });
      await file('menu.pdf').waitFor({ timeout: TIMEOUT });
      await file('menu.pdf').locator('[data-testid=file-open]').click();
      const layer = page.locator('skald-document-view .textLayer');
      await layer.filter({ hasText: 'Café' }).waitFor({ timeout: TIMEOUT });
      const inked = await page.locator('[data-testid=pdf-canvas]').evaluate((canvas) => {
        const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
        let dark = 0;
        for (let i = 0; i < data.length; i += 4) if (data[i] < 128 && data[i + 3] > 0) dark += 1;
        return dark;
      });
      assert.ok(inked > 50, 'page 1 was drawn on the canvas');
      assert.equal(await page.locator('[data-testid=page-of]').innerText(), 'Page 1 of 2');
      await page.locator('[data-testid=page-next]').click();
      await layer.filter({ hasText: 'second page' }).waitFor({ timeout: TIMEOUT });
      assert.match(await page.evaluate(() => location.hash), /\?page=2$/);
      await page.locator('[data-testid=document-back]').click();

      // Deleting asks first.
      await file('pantry.txt').locator('[data-testid=file-delete]').click();
      await page.locator('[data-testid=confirm-ok]').click();
      await file('pantry.txt').waitFor({ state: 'detached', timeout: TIMEOUT });
      assert.equal(await file('recipe.md').count(), 1);

      assert.deepEqual(problems(consoleMessages), []);
      assert.deepEqual(failedResponses, []);
    } finally {
      await close();
    }
  });

  test('a file attached in the composer goes to the model with the message, shows as a link, and a citation of it opens the Files page', async () => {
    const { page, consoleMessages, failedResponses, close } = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
    try {
      await logIn(page, ADA, TIMEOUT);
      await page.locator('#main[data-page=chat]').waitFor({ timeout: TIMEOUT });

      const words = 'What goes in the winter soup?';
      const text = 'Leeks, barley and a pinch of smoked paprika.';
      await page.locator('[data-testid=attach-input]').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from(`${text}\n`) });
      const chip = page.locator('[data-testid=attachment]');
      await chip.and(page.locator('[data-state=ready]')).waitFor({ timeout: TIMEOUT });
      assert.equal(await chip.locator('[data-testid=attachment-name]').innerText(), 'notes.txt');
      const id = await chip.getAttribute('data-id');
      assert.match(id, /^doc_[0-9a-f]{24}$/);
      await screenshot(page, 'documents-attaching');

      await stack.model.push({ text: `Leeks and barley, as [notes.txt, p. 1](#/files/${id}?page=1) says.` });
      await page.locator('[data-testid=composer]').fill(words);
      await page.locator('[data-testid=send]').click();
      const turn = page.locator('[data-testid=turn]');
      await turn.and(page.locator('[data-status=done]')).waitFor({ timeout: TIMEOUT });
      await chip.waitFor({ state: 'detached', timeout: TIMEOUT });

      // The model read the words, then the document inside the wrapper that marks it as outside content.
      const requests = await stack.model.requests();
      const asked = requests.at(-1).body.messages.filter((m) => m.role === 'user').at(-1).content;
      const said = typeof asked === 'string' ? asked : asked.map((part) => part.text ?? '').join('');
      assert.ok(said.startsWith(`${words}\n\n`), said);
      const wrapped = said.slice(said.indexOf(`<untrusted_content source="document:${id}">`));
      assert.ok(wrapped.startsWith(`<untrusted_content source="document:${id}">\nName: notes.txt\n`), said);
      assert.ok(wrapped.slice(0, wrapped.indexOf('</untrusted_content>')).includes(text), 'the document’s text is inside the wrapper');

      // The message shows the words and the document as a link, never the text sent with it.
      const message = turn.locator('[data-testid=user-message]');
      assert.equal(await message.innerText(), words);
      const attached = turn.locator('[data-testid=message-attachment]');
      await attached.waitFor({ timeout: TIMEOUT });
      assert.equal(await attached.innerText(), 'notes.txt');
      assert.equal(await attached.getAttribute('href'), `#/files/${id}`);
      assert.doesNotMatch(await turn.locator('.user').innerText(), /untrusted_content|smoked paprika/);
      await screenshot(page, 'documents-attached');

      // The reply cites the page; the citation opens the document there, in this window.
      const citation = turn.locator('[data-testid=assistant-message] skald-markdown a');
      assert.equal(await citation.innerText(), 'notes.txt, p. 1');
      assert.equal(await citation.getAttribute('href'), `#/files/${id}?page=1`);
      assert.equal(await citation.getAttribute('target'), null);
      await citation.click();
      await page.locator('#main[data-page=files]').waitFor({ timeout: TIMEOUT });
      assert.equal(await page.evaluate(() => location.hash), `#/files/${id}?page=1`);
      await page.locator('[data-testid=document-text]').filter({ hasText: 'smoked paprika' }).waitFor({ timeout: TIMEOUT });

      assert.deepEqual(problems(consoleMessages), []);
      assert.deepEqual(failedResponses, []);
    } finally {
      await close();
    }
  });
});
