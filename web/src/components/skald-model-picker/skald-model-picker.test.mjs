// The model picker in Chromium: which models it lists and how (local first, a provider
// named, a model that reads pictures saying so), the choice it reports, and when it
// refuses to change.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { componentFixture, emitted, mount, recordEvents, setProperties } from '../../../tests/mount.mjs';

const model = (name, privacy, images = false) => {
  const [provider, model_id] = name.split('/');
  return { name, provider, provider_id: `provider_${provider}`, model_id, strength: 'standard', images, privacy, configured_by: 'Ada' };
};
// As the server might list them: a remote model before the local ones.
const MODELS = [model('cloud/gpt-4o', 'remote'), model('home/llama', 'local'), model('lan/qwen', 'local')];

describe('the model picker', () => {
  const { page } = componentFixture(['components/skald-model-picker/skald-model-picker.ts']);

  const show = async (properties) => {
    await mount(page, '<skald-model-picker></skald-model-picker>', properties);
    await recordEvents(page, ['skald-model-change']);
  };
  const select = () => page.locator('[data-testid=model-picker]');
  /** The options as a person reads them: each group's label, then its options. */
  const listing = () =>
    select().evaluate((el) =>
      [...el.querySelectorAll(':scope > *')].map((item) =>
        item.tagName === 'OPTGROUP' ? [item.label, ...[...item.querySelectorAll('option')].map((o) => o.textContent.trim())] : item.textContent.trim(),
      ),
    );

  test('Automatic first, then the models on this computer, then those sent to a provider, which is named', async () => {
    await show({ models: MODELS });
    assert.deepEqual(await listing(), [
      'Automatic',
      ['On this computer', 'home/llama', 'lan/qwen'],
      ['Sent to a provider', 'cloud/gpt-4o (sent to cloud)'],
    ]);
    assert.equal(await select().getAttribute('title'), 'Model for this conversation');
    assert.equal(await page.getByLabel('Model for this conversation').count(), 1, 'the select has its label');
  });

  test('a model that reads pictures says so in words, wherever its words go; the others say nothing of it', async () => {
    await show({ models: [model('cloud/gpt-4o', 'remote', true), model('home/llava', 'local', true), model('lan/qwen', 'local')] });
    assert.deepEqual(await listing(), [
      'Automatic',
      ['On this computer', 'home/llava · reads pictures', 'lan/qwen'],
      ['Sent to a provider', 'cloud/gpt-4o (sent to cloud) · reads pictures'],
    ]);
    await select().selectOption('home/llava');
    assert.deepEqual(await emitted(page), [{ type: 'skald-model-change', model: 'home/llava' }], 'the choice is the model, not its words');
  });

  test('only the models it is given are offered, and a group without models is left out', async () => {
    await show({ models: [model('home/llama', 'local')] });
    assert.deepEqual(await listing(), ['Automatic', ['On this computer', 'home/llama']]);
  });

  test('it shows the conversation\'s model, or Automatic', async () => {
    await show({ models: MODELS, value: 'cloud/gpt-4o' });
    assert.equal(await select().inputValue(), 'cloud/gpt-4o');
    await setProperties(page, 'skald-model-picker', { value: null });
    assert.equal(await select().inputValue(), '');
    assert.equal(await select().locator('option:checked').textContent(), 'Automatic');
  });

  test('a choice fires the model\'s name, and Automatic fires null', async () => {
    await show({ models: MODELS, value: 'home/llama' });
    await select().selectOption('cloud/gpt-4o');
    await select().selectOption({ label: 'Automatic' });
    assert.deepEqual(await emitted(page), [
      { type: 'skald-model-change', model: 'cloud/gpt-4o' },
      { type: 'skald-model-change', model: null },
    ]);
  });

  test('the arrow keys move through the choices, each one reported', async () => {
    await show({ models: MODELS });
    await select().focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    assert.deepEqual(await emitted(page), [
      { type: 'skald-model-change', model: 'home/llama' },
      { type: 'skald-model-change', model: 'lan/qwen' },
    ]);
  });

  test('while a reply is written the model cannot change, and the picker says why', async () => {
    await show({ models: MODELS, value: 'home/llama', disabled: true });
    assert.ok(await select().isDisabled());
    assert.equal(await select().getAttribute('title'), 'The model can change once this reply is finished.');
    await page.keyboard.press('Tab');
    await page.keyboard.press('ArrowDown');
    assert.deepEqual(await emitted(page), []);
    assert.equal(await select().inputValue(), 'home/llama');
  });

  test('with no model to offer it is off', async () => {
    await show({ models: [] });
    assert.ok(await select().isDisabled());
    assert.deepEqual(await listing(), ['Automatic']);
  });

  test('a pick the conversation did not take does not stay on screen', async () => {
    // The conversation keeps `value` as it was (a pin the server refused) and renders again.
    await show({ models: MODELS, value: null });
    await select().selectOption('cloud/gpt-4o');
    await setProperties(page, 'skald-model-picker', { disabled: true });
    assert.equal(await select().inputValue(), '', 'the picker shows what the conversation uses');
  });
});
