// The Models section in Chromium, the server played through the page's routing: which of
// a provider's models read pictures, as a box per model the administrator may change.
// A change sends the provider's whole model list back, every model with all it has and
// only the one box changed; the boxes wait while it goes; it is announced, the list is
// read again and the model list everyone sees is told to reload. A refusal is shown in
// the server's words and the box goes back. The built-in provider offers no such box.
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { componentFixture, emitted, recordEvents } from '../../../tests/mount.mjs';
import { axeViolationsInThemes } from '../../../tests/e2e/harness.mjs';

const provider = (id, name, kind, base_url, models) => ({
  id,
  name,
  kind,
  base_url,
  models,
  privacy: kind === 'local' ? 'local' : 'remote',
  trusted_lan: false,
  image_model: null,
  transcription_model: null,
  speech_model: null,
  speech_voice: null,
  has_key: kind !== 'local',
  created_by: 'Ada',
  created_at: '2026-12-05T10:00:00Z',
  updated_by: 'Ada',
  updated_at: '2026-12-05T10:00:00Z',
});
const model = (model_id, context_window, strength, tools, images) => ({ model_id, context_window, strength, tools, images });

const LOCAL_MODELS = {
  models: [],
  disk_bytes: 0,
  engine: {
    available: true,
    compiled_for: [],
    threads: 4,
    context: 4096,
    idle_seconds: 300,
    loaded: null,
    last_request: null,
    requests_answered: 0,
    worker_pid: null,
    crashes: [],
  },
};

const VOICE = {
  transcription: { engine: 'whisper.cpp', available: false, why: 'no speech model is installed yet: an administrator adds one', models: [] },
  speech: { engine: 'espeak-ng', why: 'no voice is installed yet: an administrator adds one', voices: [] },
};

/** What the played server answers, and what it was sent. */
let server;

beforeEach(() => {
  server = {
    providers: [
      provider('provider_cloud', 'cloud', 'openai', 'https://api.example.com/v1', [
        model('gpt-4o', 128000, 'strong', true, false),
        model('gpt-4o-mini', 64000, 'fast', false, true),
        model('embed-small', 8192, 'standard', false, false),
      ]),
      provider('local', 'local', 'local', 'builtin:', [model('test-default', 4096, 'standard', true, false)]),
    ],
    reads: 0,
    patched: [],
    /** Until it settles, a PATCH is not answered. */
    hold: Promise.resolve(),
    refuse: null,
  };
});

async function api(route, request) {
  const { pathname } = new URL(request.url());
  const method = request.method();
  if (method === 'GET' && pathname === '/api/providers') {
    server.reads += 1;
    return route.fulfill({ json: server.providers });
  }
  if (method === 'GET' && pathname === '/api/providers/detect') return route.fulfill({ json: [] });
  if (method === 'GET' && pathname === '/api/local-models') return route.fulfill({ json: LOCAL_MODELS });
  if (method === 'GET' && pathname === '/api/local-models/catalogue') return route.fulfill({ json: { available: true, unavailable: null, models: [] } });
  if (method === 'GET' && pathname === '/api/local-models/downloads') return route.fulfill({ json: [] });
  if (method === 'GET' && pathname === '/api/voice') return route.fulfill({ json: VOICE });
  if (method === 'GET' && pathname === '/api/voice/catalogue') return route.fulfill({ json: { entries: [] } });
  if (method === 'GET' && pathname === '/api/voice/downloads') return route.fulfill({ json: [] });
  const one = /^\/api\/providers\/([^/]+)$/.exec(pathname);
  if (method === 'PATCH' && one) {
    const body = request.postDataJSON();
    server.patched.push({ id: one[1], body });
    await server.hold;
    if (server.refuse) return route.fulfill({ status: 409, json: { error: { code: 'conflict', message: server.refuse } } });
    const models = body.models?.map(({ id, context_window, strength, tools, images }) => ({ model_id: id, context_window, strength, tools, images }));
    server.providers = server.providers.map((p) => (p.id === one[1] ? { ...p, ...body, ...(models ? { models } : {}) } : p));
    return route.fulfill({ status: 204 });
  }
  return route.fulfill({ status: 404, json: { error: { code: 'not_found', message: 'no such route here' } } });
}

describe('the Models section: which models read pictures', () => {
  const { page } = componentFixture(['components/skald-admin-models/skald-admin-models.ts', 'api/client.ts'], () => ({ api }));

  const show = async () => {
    await page.evaluate(async () => {
      const { ApiClient } = window.skald['api/client.ts'];
      const element = document.createElement('skald-admin-models');
      element.login = { client: new ApiClient('token', { baseUrl: location.origin }), live: new EventTarget() };
      document.body.append(element);
      await element.updateComplete;
    });
    await recordEvents(page, ['skald-models-changed']);
    await box('gpt-4o').waitFor();
  };
  const box = (id) => page.locator(`[data-testid=model-images][data-model="${id}"]`);
  const boxes = () => page.locator('[data-testid=model-images]');
  /** axe's findings about the element, not about the bare test page around it (no <main>, no <h1>). */
  const axe = async () => (await axeViolationsInThemes(page)).filter((v) => !/: (landmark-one-main|page-has-heading-one|region) /.test(v));

  test('each model of a provider has a box that shows whether it reads pictures, named after it and explained', async () => {
    await show();
    assert.deepEqual(await boxes().evaluateAll((all) => all.map((b) => [b.dataset.model, b.checked])), [
      ['gpt-4o', false],
      ['gpt-4o-mini', true],
      ['embed-small', false],
    ]);
    assert.equal(await page.getByRole('checkbox', { name: 'gpt-4o-mini reads pictures' }).isChecked(), true);
    assert.match(await page.locator('[data-testid=provider-item][data-name=cloud]').innerText(), /gpt-4o \(strong\)\s+Reads pictures/);
    const hint = await box('gpt-4o').evaluate((b) => b.getRootNode().getElementById(b.getAttribute('aria-describedby'))?.textContent);
    assert.equal(hint, 'Pictures attached to a message go to models that read them; others get the words read from the picture.');
    assert.deepEqual(await axe(), [], 'accessibility of the models list');
  });

  test('the built-in provider offers no such box: its models read words only', async () => {
    await show();
    assert.equal(await box('test-default').count(), 0);
    assert.equal(await boxes().count(), 3, 'only the connected provider’s models');
  });

  test('a change sends every model with all it has, only that one changed, and is told and read again', async () => {
    let answer;
    server.hold = new Promise((resolve) => (answer = resolve));
    await show();
    const reads = server.reads;
    await box('gpt-4o').check();
    assert.deepEqual(await boxes().evaluateAll((all) => all.map((b) => [b.checked, b.disabled])), [
      [true, true],
      [true, true],
      [false, true],
    ], 'the box stays as set, and nothing else changes meanwhile');
    assert.ok(await page.locator('[data-testid=provider-test]').isDisabled());
    answer();

    await page.getByRole('status').filter({ hasText: 'gpt-4o now reads pictures: they go to it as they are.' }).waitFor();
    assert.deepEqual(server.patched, [
      {
        id: 'provider_cloud',
        body: {
          models: [
            { id: 'gpt-4o', context_window: 128000, strength: 'strong', tools: true, images: true },
            { id: 'gpt-4o-mini', context_window: 64000, strength: 'fast', tools: false, images: true },
            { id: 'embed-small', context_window: 8192, strength: 'standard', tools: false, images: false },
          ],
        },
      },
    ]);
    await page.waitForFunction(() => !document.querySelector('skald-admin-models').shadowRoot.querySelector('[data-testid=model-images]').disabled);
    assert.ok(server.reads > reads, 'the list was read again');
    assert.deepEqual(await boxes().evaluateAll((all) => all.map((b) => b.checked)), [true, true, false]);
    assert.deepEqual(await emitted(page), [{ type: 'skald-models-changed' }], 'the model list everyone sees reloads');

    await box('gpt-4o-mini').uncheck();
    await page.getByRole('status').filter({ hasText: 'gpt-4o-mini no longer reads pictures: it gets the words read from them.' }).waitFor();
    assert.deepEqual(
      server.patched[1].body.models.map((m) => [m.id, m.images]),
      [
        ['gpt-4o', true],
        ['gpt-4o-mini', false],
        ['embed-small', false],
      ],
    );
  });

  test('a refusal is shown in the server’s words and the box goes back', async () => {
    server.refuse = 'this provider cannot take pictures';
    let answer;
    server.hold = new Promise((resolve) => (answer = resolve));
    await show();
    await box('embed-small').check();
    assert.ok(await box('embed-small').isDisabled(), 'it waits for the answer');
    assert.equal(await box('embed-small').isChecked(), true, 'as it was set, meanwhile');
    answer();
    await page.locator('[data-testid=models-error]').filter({ hasText: 'this provider cannot take pictures' }).waitFor();
    assert.equal(await box('embed-small').isChecked(), false);
    assert.ok(await box('embed-small').isEnabled());
    assert.deepEqual(await emitted(page), [], 'nothing changed for anyone');
  });
});

describe('the Models section: what a provider writes speech down and reads aloud with', () => {
  const { page } = componentFixture(['components/skald-admin-models/skald-admin-models.ts', 'api/client.ts'], () => ({ api }));

  const card = () => page.locator('[data-testid=provider-item][data-name=cloud]');
  const show = async () => {
    await page.evaluate(async () => {
      const { ApiClient } = window.skald['api/client.ts'];
      const element = document.createElement('skald-admin-models');
      element.login = { client: new ApiClient('token', { baseUrl: location.origin }), live: new EventTarget() };
      document.body.append(element);
      await element.updateComplete;
    });
    await card().locator('[data-testid=transcription-model]').waitFor();
  };

  test('an OpenAI-compatible provider offers them, saying whose voice may go there; the built-in one does not', async () => {
    await show();
    assert.equal(await page.locator('[data-testid=provider-voice]').count(), 1);
    const hint = await card()
      .locator('[data-testid=transcription-model]')
      .evaluate((input) => input.getAttribute('aria-describedby').split(' ').map((id) => input.getRootNode().getElementById(id)?.textContent));
    assert.deepEqual(hint, [
      'None: what people say is written down on this computer.',
      'A person’s voice goes to cloud only if their role lets their words go there, and only once they have accepted the change: Skald asks each of them first, and until they continue with it their voice stays on this computer.',
    ]);
  });

  test('each form sends its own fields, trimmed, empty as none; removing reading aloud removes its voice too', async () => {
    await show();
    await card().locator('[data-testid=transcription-model]').fill('  whisper-1 ');
    await card().locator('[data-testid=transcription-model-save]').click();
    await card().locator('[data-testid=transcription-model-remove]').waitFor();
    await page.getByRole('status').filter({ hasText: 'cloud now writes speech down with whisper-1, for each person who accepts it.' }).waitFor();

    await card().locator('[data-testid=speech-model]').fill('tts-1');
    await card().locator('[data-testid=speech-model-save]').click();
    await card().locator('[data-testid=speech-model-remove]').waitFor();
    await card().locator('[data-testid=speech-voice]').fill('alloy');
    await card().locator('[data-testid=speech-model-save]').click();
    await page.waitForFunction(() => !document.querySelector('skald-admin-models').shadowRoot.querySelector('[data-testid=speech-model-save]').disabled);
    await card().locator('[data-testid=speech-model-remove]').click();
    await card().locator('[data-testid=speech-model-none]').waitFor();
    await card().locator('[data-testid=transcription-model-remove]').click();
    await card().locator('[data-testid=transcription-model-none]').waitFor();
    await page.getByRole('status').filter({ hasText: 'cloud no longer writes speech down.' }).waitFor();

    assert.deepEqual(
      server.patched.map((p) => p.body),
      [
        { transcription_model: 'whisper-1' },
        { speech_model: 'tts-1', speech_voice: null },
        { speech_model: 'tts-1', speech_voice: 'alloy' },
        { speech_model: null, speech_voice: null },
        { transcription_model: null },
      ],
    );
    assert.equal(await card().locator('[data-testid=speech-voice]').inputValue(), '');
  });
});
