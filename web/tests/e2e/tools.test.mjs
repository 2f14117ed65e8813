// Tool servers (MCP) in the page, against a real one (server-everything from npm,
// installed by tests/fetch-mcp-servers.sh): the administrator adds it on the tool servers
// page, sees its tools as new with their pins, and approves it; a member's privacy page
// names it, shared by everyone; in a conversation the server's form shows as a card the
// member fills in and sends, and its progress shows on the call. Every view passes
// axe-core in both themes and fits a 360-px window.
//
//   SKALD_BIN=/path/to/skald npm run test:e2e
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';

import { api, axeViolationsInThemes, logIn, openPage, problems, seedInstance, sidewaysOverflow, startStack, stopStack } from './harness.mjs';

const ADA = { name: 'Ada', password: 'otter lantern quietly' };
const BEA = { name: 'Bea', password: 'maple harbour violin' };
const TIMEOUT = 20_000;
const EVERYTHING = path.resolve(
  import.meta.dirname,
  '../../../tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js',
);

async function checkView(page, name) {
  const found = await axeViolationsInThemes(page, { screenshot: `tools-${name}` });
  await page.setViewportSize({ width: 360, height: 720 });
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => resolve())));
  for (const o of await sidewaysOverflow(page)) found.push(`360 px: ${o}`);
  await page.setViewportSize({ width: 1280, height: 800 });
  assert.deepEqual(found, [], `accessibility or layout problems on ${name}`);
}

describe('tool servers', () => {
  let stack;

  before(async () => {
    assert.ok(existsSync(EVERYTHING), `${EVERYTHING} is missing: run tests/fetch-mcp-servers.sh`);
    stack = await startStack();
    await seedInstance(stack.server, stack.model, ADA, [[BEA, 'member']]);
    await api(stack.server.origin, stack.server.token, 'POST', '/api/lock-all');
  });

  after(() => stopStack(stack));

  const open = () => openPage(stack.browser, `${stack.server.origin}/#token=${stack.server.token}`);

  test('the administrator adds a server, sees its tools unapproved, and approves it', async () => {
    const { page, close, consoleMessages } = await open();
    try {
      await logIn(page, ADA, TIMEOUT);
      await page.evaluate(() => {
        window.location.hash = '#/admin/tools';
      });
      await page.locator('[data-testid=tools-empty]').waitFor({ timeout: TIMEOUT });
      await page.locator('#server-preset').selectOption({ index: 1 });
      assert.equal(await page.locator('#server-name').inputValue(), 'memory', 'a preset fills the form');
      await page.locator('#server-name').fill('everything');
      await page.locator('#server-command').fill('node');
      await page.locator('#server-args').fill(`${EVERYTHING}\nstdio`);
      await page.locator('#server-env').fill('');
      await page.locator('#server-shared').check();
      await page.locator('[data-testid=server-add]').click();
      const server = page.locator('[data-testid=tool-server]');
      await server.waitFor({ timeout: TIMEOUT });
      const echo = server.locator('[data-testid=server-tool][data-name=echo]');
      await echo.waitFor({ timeout: TIMEOUT });
      assert.equal(await echo.getAttribute('data-status'), 'new');
      assert.match(await echo.innerText(), /pin [0-9a-f]{12}/);
      assert.equal(await server.locator('[data-testid=server-approval]').getAttribute('data-approval'), 'unapproved');
      assert.match(await server.locator('[data-testid=server-files]').innerText(), /mcp\/everything\/.*does not encrypt/);
      await checkView(page, 'admin');

      await server.locator('[data-testid=server-approve]').click();
      await server.locator('[data-testid=server-approval][data-approval=approved]').waitFor({ timeout: TIMEOUT });
      assert.equal(await echo.getAttribute('data-status'), 'approved');
      assert.equal(await server.locator('[data-testid=server-tool][data-status=new]').count(), 0);
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });

  test('a member sees the shared server on their privacy page, and fills in its form in a conversation', async () => {
    const { page, close, consoleMessages } = await open();
    try {
      // The approval is a change to where Bea's words may go: she continues past it first.
      const session = await api(stack.server.origin, stack.server.token, 'POST', '/api/login', BEA);
      const held = (await api(stack.server.origin, session.token, 'GET', '/api/notices')).filter((n) => n.holds);
      for (const notice of held) {
        await api(stack.server.origin, session.token, 'POST', `/api/notices/${notice.id}/accept`, { decision: 'accept' });
      }
      assert.ok(held.length >= 1, 'the approved server held the member until they continued');
      await logIn(page, BEA, TIMEOUT);

      await page.locator('[data-testid=nav-privacy]').click();
      const listed = page.locator('[data-testid=privacy-tool-server][data-name=everything]');
      await listed.waitFor({ timeout: TIMEOUT });
      await listed.locator('[data-testid=tool-server-shared]').waitFor();
      assert.match(await listed.locator('[data-testid=tool-server-files]').innerText(), /does not encrypt/, 'a program here keeps its own files');

      await stack.model.push([
        { tool_calls: [{ name: 'mcp__everything__trigger-elicitation-request', arguments: {} }] },
        { text: 'Thanks.' },
      ]);
      await page.locator('[data-testid=new-chat]').click();
      await page.locator('[data-testid=composer]').fill('Ask me for my details');
      await page.keyboard.press('Enter');
      const approval = page.locator('skald-approval-card');
      await approval.waitFor({ timeout: TIMEOUT });
      assert.match(await approval.locator('[data-testid=tool-server]').innerText(), /everything/);
      await approval.locator('[data-testid=tool-server-shared]').waitFor();
      await approval.locator('[data-testid=allow]').click();

      const form = page.locator('skald-form-card');
      await form.waitFor({ timeout: TIMEOUT });
      assert.equal(await form.locator('input[name=integer]').inputValue(), '42', 'the server\'s default is filled in');
      await checkView(page, 'form');
      await form.locator('input[name=name]').fill('Bea Example');
      await form.locator('[data-testid=form-accept]').click();
      await form.waitFor({ state: 'detached', timeout: TIMEOUT });
      await page.locator('[data-testid=turn]').last().and(page.locator('[data-status=done]')).waitFor({ timeout: TIMEOUT });
      const result = page.locator('skald-tool-call').last();
      await result.locator('summary').click();
      assert.match(await result.locator('pre.result').innerText(), /Name: Bea Example/, 'the server had what Bea typed');

      // The server's prompts are templates: one fills the composer, and nothing is sent.
      await page.locator('[data-testid=new-chat]').click();
      await page.locator('[data-testid=turn]').first().waitFor({ state: 'detached', timeout: TIMEOUT });
      const templates = page.locator('[data-testid=tool-prompts]');
      await templates.waitFor({ timeout: TIMEOUT });
      await templates.locator('summary').click();
      await templates.locator('[data-testid=tool-prompt][data-name=args-prompt]').click();
      await checkView(page, 'templates');
      const city = templates.locator('input[name=city]');
      assert.equal(await city.getAttribute('required'), '', 'the argument the server requires is required');
      await city.fill('Oslo');
      await templates.locator('[data-testid=tool-prompt-use]').click();
      await page.waitForFunction(() => {
        let element = document.activeElement;
        while (element?.shadowRoot?.activeElement) element = element.shadowRoot.activeElement;
        return element?.getAttribute('data-testid') === 'composer' && element.value === "What's weather in Oslo?";
      }, undefined, { timeout: TIMEOUT });
      assert.equal(await page.locator('[data-testid=turn]').count(), 0, 'choosing a template sends nothing');

      // A resource ticked goes with the next message, as outside content.
      await templates.locator('[data-testid=tool-resource][data-uri="demo://resource/static/document/features.md"]').check();
      await templates.locator('[data-testid=attached-count]').waitFor();
      await stack.model.push({ text: 'It lists the features.' });
      await page.locator('[data-testid=composer]').press('Enter');
      await page.locator('[data-testid=turn]').last().and(page.locator('[data-status=done]')).waitFor({ timeout: TIMEOUT });
      const requests = await stack.model.requests();
      const said = requests.at(-1).body.messages.filter((m) => m.role === 'user').at(-1).content;
      assert.match(said, /^What's weather in Oslo\?/);
      assert.match(said, /<untrusted_content source="mcp:everything\/resource">/);
      assert.equal(await templates.locator('[data-testid=attached-count]').count(), 0, 'the attachment went with that message only');
      assert.deepEqual(problems(consoleMessages), []);
    } finally {
      await close();
    }
  });
});
