// The composer as a person uses it, in Chromium: typing, Enter and Shift+Enter, the Send
// button, and Stop (a click or Escape) while a reply is being written; Send held, saying why,
// while the message waits for its files.
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { componentFixture, emitted, mount, recordEvents, setProperties } from '../../../tests/mount.mjs';

describe('the composer', () => {
  const { page } = componentFixture(['components/skald-composer/skald-composer.ts']);
  beforeEach(async () => {
    await mount(page, '<skald-composer></skald-composer>');
    await recordEvents(page, ['skald-send', 'skald-stop']);
  });

  const field = () => page.locator('[data-testid=composer]');
  const send = () => page.locator('[data-testid=send]');
  const stop = () => page.locator('[data-testid=stop]');

  test('Enter sends the words, trimmed, and empties the field', async () => {
    await field().click();
    await page.keyboard.type('  what is the time?  ');
    await page.keyboard.press('Enter');
    assert.deepEqual(await emitted(page), [{ type: 'skald-send', text: 'what is the time?' }]);
    assert.equal(await field().inputValue(), '');
    assert.ok(await send().isDisabled(), 'an empty field has nothing to send');
  });

  test('Shift+Enter starts a new line, sends nothing, and the field grows with it', async () => {
    await field().click();
    await page.keyboard.type('first line');
    const oneLine = (await field().boundingBox()).height;
    await page.keyboard.press('Shift+Enter');
    await page.keyboard.type('second line');
    await page.keyboard.press('Shift+Enter');
    await page.keyboard.type('third line');
    assert.deepEqual(await emitted(page), []);
    assert.equal(await field().inputValue(), 'first line\nsecond line\nthird line');
    assert.ok((await field().boundingBox()).height > oneLine, 'three lines take more room than one');
    await page.keyboard.press('Enter');
    assert.deepEqual(await emitted(page), [{ type: 'skald-send', text: 'first line\nsecond line\nthird line' }]);
  });

  test('Send is off for an empty or blank field, and Enter then sends nothing', async () => {
    assert.ok(await send().isDisabled());
    await field().click();
    await page.keyboard.type('   ');
    assert.ok(await send().isDisabled(), 'blanks alone are not a message');
    await page.keyboard.press('Enter');
    assert.deepEqual(await emitted(page), []);
    await page.keyboard.type('hi');
    assert.ok(await send().isEnabled());
    await send().click();
    assert.deepEqual(await emitted(page), [{ type: 'skald-send', text: 'hi' }]);
  });

  test('while a reply is written, Stop replaces Send: a click or Escape stops, Enter sends nothing', async () => {
    await setProperties(page, 'skald-composer', { busy: true });
    assert.equal(await send().count(), 0, 'no Send while a reply is written');
    assert.equal(await stop().getAttribute('aria-label'), 'Stop the reply');
    await field().click();
    await page.keyboard.type('and then?');
    await page.keyboard.press('Enter');
    assert.equal(await field().inputValue(), 'and then?', 'the next message waits in the field');
    await stop().click();
    await field().focus();
    await page.keyboard.press('Escape');
    assert.deepEqual(await emitted(page), [{ type: 'skald-stop' }, { type: 'skald-stop' }]);

    // The reply ends: Send is back, and the words written meanwhile go.
    await setProperties(page, 'skald-composer', { busy: false });
    assert.equal(await stop().count(), 0);
    await field().focus();
    await page.keyboard.press('Enter');
    assert.deepEqual((await emitted(page)).slice(2), [{ type: 'skald-send', text: 'and then?' }]);
  });

  test('a disabled composer keeps what is typed but sends none of it, and Escape stops nothing', async () => {
    await setProperties(page, 'skald-composer', { disabled: true });
    await field().click();
    await page.keyboard.type('hello');
    assert.ok(await send().isDisabled());
    await page.keyboard.press('Enter');
    await page.keyboard.press('Escape');
    assert.deepEqual(await emitted(page), []);
    assert.equal(await field().inputValue(), 'hello');
  });

  test('while the message waits (a file still being read), Send is off and says why; then the words go', async () => {
    await setProperties(page, 'skald-composer', { waiting: 'Sending waits until the attached files are read.' });
    await field().click();
    await page.keyboard.type('summarise it');
    assert.ok(await send().isDisabled());
    assert.equal(await page.locator('[data-testid=send-waits]').innerText(), 'Sending waits until the attached files are read.');
    const describedBy = await send().getAttribute('aria-describedby');
    assert.equal(await page.locator(`skald-composer #${describedBy}`).innerText(), 'Sending waits until the attached files are read.', 'Send names why it is off');
    await page.keyboard.press('Enter');
    assert.deepEqual(await emitted(page), []);
    assert.equal(await field().inputValue(), 'summarise it', 'the words wait in the field');

    await setProperties(page, 'skald-composer', { waiting: '' });
    assert.equal(await page.locator('[data-testid=send-waits]').count(), 0);
    assert.equal(await send().getAttribute('aria-describedby'), null);
    await send().click();
    assert.deepEqual(await emitted(page), [{ type: 'skald-send', text: 'summarise it' }]);
  });

  test('words the conversation puts back (a refused message) are in the field, ready to send again', async () => {
    await setProperties(page, 'skald-composer', { value: 'please note this' });
    assert.equal(await field().inputValue(), 'please note this');
    assert.ok(await send().isEnabled());
    await send().click();
    assert.deepEqual(await emitted(page), [{ type: 'skald-send', text: 'please note this' }]);
  });
});
