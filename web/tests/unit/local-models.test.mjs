// The built-in model in words and numbers: sizes, progress, the catalogue's order, which
// download an entry shows, and where an installed model came from.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { loadModule } from './load.mjs';

let local;

before(async () => {
  local = await loadModule('state/local-models.ts');
});

const entry = (id, recommended, url = `https://example.org/${id}.gguf`) => ({
  id,
  name: id,
  description: '',
  recommended,
  kind: recommended === 'embedding' ? 'embedding' : 'chat',
  parameters: 1_540_000_000,
  size_bytes: 1_120_000_000,
  licence: 'Apache-2.0',
  tools: true,
  source_url: url,
  sha256: '0'.repeat(64),
  installed: null,
});

const download = (id, url, state, received = 0, total = null) => ({ id, name: id, url, received, total, state, error: null, model: null });

describe('sizes', () => {
  test('are written in decimal units, with one decimal only below ten', () => {
    assert.equal(local.formatBytes(0), '0 bytes');
    assert.equal(local.formatBytes(999), '999 bytes');
    assert.equal(local.formatBytes(1000), '1 KB');
    assert.equal(local.formatBytes(9_540_000), '9.5 MB');
    assert.equal(local.formatBytes(98_362_432), '98 MB');
    assert.equal(local.formatBytes(412_000_000), '412 MB');
    assert.equal(local.formatBytes(1_120_000_000), '1.1 GB');
  });

  test('that round up to a thousand move to the next unit', () => {
    assert.equal(local.formatBytes(999_700_000), '1 GB');
    assert.equal(local.formatBytes(9_960_000), '10 MB');
  });

  test('parameter counts read as model cards write them', () => {
    assert.equal(local.formatParameters(134_515_008), '135M');
    assert.equal(local.formatParameters(1_540_000_000), '1.5B');
    assert.equal(local.formatParameters(null), '');
  });
});

describe('progress', () => {
  test('says how much of how much, in whole percent', () => {
    assert.equal(local.progressText(412_000_000, 1_120_000_000), '412 MB of 1.1 GB');
    assert.equal(local.progressPercent(412_000_000, 1_120_000_000), 36);
    assert.equal(local.progressPercent(1, 1), 100);
  });

  test('without a known total is only what arrived, and no percent', () => {
    assert.equal(local.progressText(5_000_000, null), '5 MB');
    assert.equal(local.progressPercent(5_000_000, null), null);
    assert.equal(local.progressPercent(5, 0), null);
  });
});

describe('the catalogue', () => {
  test('offers the recommended default first, then the tiny one, then the rest as listed, memory search last', () => {
    const ordered = local.orderCatalogue([entry('search', 'embedding'), entry('a', null), entry('tiny', 'tiny'), entry('b', null), entry('main', 'default')]);
    assert.deepEqual(ordered.map((e) => e.id), ['main', 'tiny', 'a', 'b', 'search']);
  });

  test('the memory search model is no chat model: no word of tools, and its download size as fetched', () => {
    const search = { ...entry('search', 'embedding'), parameters: 22_713_216, size_bytes: 45_600_000, download_bytes: 83_506_384, tools: false };
    assert.equal(local.isEmbedding(search), true);
    assert.equal(local.isEmbedding(entry('main', 'default')), false);
    assert.deepEqual(local.entryFacts(search), [
      'about 46 MB',
      '23M parameters',
      'licence Apache-2.0',
      'not a chat model',
      'checked against its publisher’s checksum',
    ]);
    assert.equal(local.downloadSize(search), '84 MB');
    assert.equal(local.downloadSize({ ...search, download_bytes: null }), '46 MB');
  });

  test('describes a model by its size, licence and whether it can use tools', () => {
    assert.deepEqual(local.entryFacts(entry('main', 'default')), [
      'about 1.1 GB',
      '1.5B parameters',
      'licence Apache-2.0',
      'can use tools',
      'checked against its publisher’s checksum',
    ]);
    assert.match(local.entryFacts({ ...entry('t', 'tiny'), tools: false }).at(-2), /cannot use tools/);
  });

  test('an entry shows the download started for it here, else the latest of its address', () => {
    const main = entry('main', 'default');
    const downloads = new Map([
      ['old', download('old', main.source_url, 'failed')],
      ['other', download('other', 'https://example.org/other.gguf', 'running')],
      ['new', download('new', main.source_url, 'running', 5)],
    ]);
    assert.equal(local.downloadFor(main, downloads, undefined).id, 'new');
    assert.equal(local.downloadFor(main, downloads, 'old').id, 'old');
    assert.equal(local.downloadFor(entry('none', null), downloads, undefined), undefined);
  });

  test('a running or checking download is watched; a failed or interrupted one may be tried again', () => {
    assert.equal(local.isActive(download('a', '', 'running')), true);
    assert.equal(local.isActive(download('a', '', 'checking')), true);
    assert.equal(local.isActive(download('a', '', 'done')), false);
    assert.equal(local.isActive(undefined), false);
    assert.equal(local.mayRetry(download('a', '', 'interrupted')), true);
    assert.equal(local.mayRetry(download('a', '', 'failed')), true);
    assert.equal(local.mayRetry(download('a', '', 'running')), false);
  });
});

describe('model files', () => {
  test('an uploaded file is named after its file, without .gguf', () => {
    assert.equal(local.modelNameFromFile('SmolLM2-135M-Instruct.Q4_1.gguf'), 'SmolLM2-135M-Instruct.Q4_1');
    assert.equal(local.modelNameFromFile('C:\\models\\Qwen.GGUF'), 'Qwen');
    assert.equal(local.modelNameFromFile('.gguf'), '.gguf');
  });

  test('where a model came from is said in words', () => {
    assert.equal(local.describeSource('upload'), 'uploaded through Skald');
    assert.equal(local.describeSource('url:https://huggingface.co/x/y.gguf'), 'downloaded from huggingface.co');
    assert.equal(local.describeSource('file:/home/ada/m.gguf'), 'the file /home/ada/m.gguf');
  });
});
