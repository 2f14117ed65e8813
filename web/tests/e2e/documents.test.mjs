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
// Pictures: on the Models page the administrator ticks the models that read pictures and
// names the one that makes them; a photo with no words in it, attached in the composer,
// reaches the model as an image part; a picture the assistant draws (after its card)
// shows under the call and links to the Files page.
//
//   SKALD_BIN=/path/to/skald node --test tests/e2e/documents.test.mjs
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { api, axeViolationsInThemes, logIn, openPage, problems, screenshot, seedInstance, sidewaysOverflow, startStack, stopStack } from './harness.mjs';
import { tinyPdf } from './pdf.mjs';
import { solidPng } from './png.mjs';

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
  test('the Models page says which models read pictures and which makes them; pictures go in and come out', async () => {
    const { page, consoleMessages, failedResponses, close } = await openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);
    try {
      await logIn(page, ADA, TIMEOUT);
      const session = await api(stack.server.origin, stack.server.token, 'POST', '/api/login', ADA);
      const providers = () => api(stack.server.origin, session.token, 'GET', '/api/providers');
      await page.evaluate(() => {
        window.location.hash = '#/admin/models';
      });
      const provider = page.locator('[data-testid=provider-item][data-name=scripted]');
      await provider.waitFor({ timeout: TIMEOUT });

      // Every model of the scripted server reads pictures, ticked one by one.
      const boxes = provider.locator('[data-testid=model-images]');
      const models = await boxes.evaluateAll((all) => all.map((box) => box.dataset.model));
      assert.ok(models.length >= 1, 'the provider lists its models with a "reads pictures" box each');
      for (const model of models) {
        const box = provider.locator(`[data-testid=model-images][data-model=${model}]`);
        assert.equal(await box.isChecked(), false);
        await box.check();
        await provider.locator(`[data-testid=model-images][data-model=${model}]:not([disabled])`).waitFor({ timeout: TIMEOUT });
      }
      const held = (await providers()).find((p) => p.name === 'scripted');
      assert.deepEqual(
        held.models.map((m) => [m.model_id, m.images]),
        models.map((m) => [m, true]),
        'the server holds what the boxes say',
      );

      // No model makes pictures until one is named.
      assert.match(await provider.locator('[data-testid=provider-image-model-none]').innerText(), /makes no pictures through scripted/);
      await provider.locator('[data-testid=provider-image-model]').fill('picture-model');
      await provider.locator('[data-testid=provider-image-model-save]').click();
      await provider.locator('[data-testid=provider-image-model-remove]').waitFor({ timeout: TIMEOUT });
      assert.equal(await provider.locator('[data-testid=provider-image-model-none]').count(), 0);
      assert.equal((await providers()).find((p) => p.name === 'scripted').image_model, 'picture-model');
      const found = await axeViolationsInThemes(page, { screenshot: 'documents-models-pictures' });
      assert.deepEqual(found, [], 'accessibility of the Models page with its picture settings');

      // A photo with no words in it is attached and goes to the model as a picture.
      await page.evaluate(() => {
        window.location.hash = '#/';
      });
      await page.locator('#main[data-page=chat]').waitFor({ timeout: TIMEOUT });
      const photo = solidPng(32, [120, 130, 140]);
      await page.locator('[data-testid=attach-input]').setInputFiles({ name: 'photo.png', mimeType: 'image/png', buffer: photo });
      const chip = page.locator('[data-testid=attachment]');
      await chip.and(page.locator('[data-state=ready]')).waitFor({ timeout: TIMEOUT });
      await stack.model.push({ text: 'A grey square.' });
      await page.locator('[data-testid=composer]').fill('What is in this photo?');
      await page.locator('[data-testid=send]').click();
      const turn = page.locator('[data-testid=turn]');
      await turn.last().and(page.locator('[data-status=done]')).waitFor({ timeout: TIMEOUT });
      const asked = (await stack.model.requests()).at(-1).body.messages.filter((m) => m.role === 'user').at(-1).content;
      assert.ok(Array.isArray(asked), 'the message went as parts');
      const image = asked.find((part) => part.type === 'image_url');
      assert.equal(image?.image_url?.url, `data:image/png;base64,${photo.toString('base64')}`, 'the picture went as it is');

      // The assistant draws a picture: asked first on a card, then shown under the call.
      await stack.model.push([
        { tool_calls: [{ name: 'image_generate', arguments: { prompt: 'a red fox in the snow' } }] },
        { text: 'Here is your fox.' },
      ]);
      await page.locator('[data-testid=composer]').fill('Draw me a fox');
      await page.locator('[data-testid=send]').click();
      const card = page.locator('skald-approval-card');
      await card.waitFor({ timeout: TIMEOUT });
      // The card shows the words that will be sent.
      await card.getByText('a red fox in the snow').first().waitFor({ timeout: TIMEOUT });
      await card.locator('[data-testid=allow]').click();
      await turn.last().and(page.locator('[data-status=done]')).waitFor({ timeout: TIMEOUT });
      const picture = turn.last().locator('skald-picture [data-testid=picture]');
      await picture.waitFor({ timeout: TIMEOUT });
      await page.waitForFunction((img) => img.complete && img.naturalWidth > 0, await picture.elementHandle(), { timeout: TIMEOUT });
      const link = turn.last().locator('skald-picture [data-testid=picture-link]');
      const href = await link.getAttribute('href');
      assert.match(href, /^#\/files\/doc_[0-9a-f]{24}$/);
      const kept = await api(stack.server.origin, session.token, 'GET', '/api/documents');
      const made = kept.find((d) => `#/files/${d.id}` === href);
      assert.equal(made?.kind, 'png', 'the picture is kept among the documents');
      assert.equal(made.status_detail, 'Made by scripted/picture-model from: a red fox in the snow');
      await screenshot(page, 'documents-picture-made');

      assert.deepEqual(problems(consoleMessages), []);
      assert.deepEqual(failedResponses, []);
    } finally {
      await close();
    }
  });
});
