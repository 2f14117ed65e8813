// A change that widens where a member's words go holds their next message (§3), in the
// browser: the page shows what changed and who did it above the composer before anything
// is sent, the composer waits, and "Continue" lets the message go — to the new address.
//
//   SKALD_BIN=/path/to/skald npm run test:e2e
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { api, axeViolationsInThemes, logIn, openPage, problems, screenshot, seedInstance, startScriptedModel, startStack, stopProcess, stopStack } from './harness.mjs';

const ADA = { name: 'Ada', password: 'otter lantern quietly' };
const BO = { name: 'Bo', password: 'maple harbour seventeen' };
const TIMEOUT = 20_000;

describe('a held change', () => {
  let stack = {};
  let elsewhere;

  before(async () => {
    stack = await startStack();
    elsewhere = await startScriptedModel();
  });

  after(async () => {
    if (elsewhere) await stopProcess(elsewhere.proc);
    await stopStack(stack);
  });

  test('is shown before the message is sent, and Continue sends it to the moved provider', async () => {
    const { server, model } = stack;
    const { setup } = await seedInstance(server, model, ADA, [[BO, 'member']]);
    const [provider] = await api(server.origin, setup.token, 'GET', '/api/providers');
    await api(server.origin, setup.token, 'PATCH', `/api/providers/${provider.id}`, { base_url: `${elsewhere.url}/v1` });
    await elsewhere.push({ text: 'Hello from the new address' });

    const { page, consoleMessages } = await openPage(stack.browser, `${server.origin}/#token=${server.token}`);
    await logIn(page, BO, TIMEOUT);
    const held = page.locator('[data-testid=held-change]');
    await held.first().waitFor({ timeout: TIMEOUT });
    assert.equal(await held.count(), 1);
    const said = await held.innerText();
    assert.match(said, new RegExp(`moved from ${model.url}/v1 to ${elsewhere.url}/v1`));
    assert.match(said, /by Ada/);
    // The words can be written, but wait: Enter sends nothing while the change is open.
    await page.locator('[data-testid=composer]').fill('Are you there?');
    await page.keyboard.press('Enter');
    assert.equal(await page.locator('[data-testid=send]').isDisabled(), true, 'the composer waits');
    assert.equal(await page.locator('[data-testid=composer]').inputValue(), 'Are you there?', 'the words stay');
    assert.equal(await page.locator('[data-testid=turn]').count(), 0, 'nothing was sent');
    assert.deepEqual(await axeViolationsInThemes(page), [], 'accessibility');
    await screenshot(page, 'held-change');

    await held.locator('[data-testid=held-continue]').click();
    await held.first().waitFor({ state: 'detached', timeout: TIMEOUT });
    await page.locator('[data-testid=send]').click();
    const last = page.locator('[data-testid=turn]').last();
    await last.and(page.locator('[data-status=done]')).waitFor({ timeout: TIMEOUT });
    assert.match(await last.locator('skald-markdown .md').innerText(), /Hello from the new address/);
    assert.deepEqual(problems(consoleMessages), []);
  });
});
