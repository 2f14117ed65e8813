// The pure logic behind the notes, privacy and administration pages: the address-bar
// routes, notices in words, reordering approval rules, a provider's privacy, search
// snippets — and the part-1 follow-ups (retry, the badge from the server's next model).
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { loadModule } from './load.mjs';

let route;
let notices;
let rules;
let providers;
let notes;
let transcript;
let privacy;

before(async () => {
  [route, notices, rules, providers, notes, transcript, privacy] = await Promise.all(
    ['route', 'notices', 'rules', 'providers', 'notes', 'transcript', 'privacy'].map((name) => loadModule(`state/${name}.ts`)),
  );
});

describe('routes in the address bar', () => {
  test('pages parse and print back; the unknown opens the conversation', () => {
    for (const hash of ['#/inbox', '#/notes', '#/memories', '#/privacy', '#/data', '#/admin/rules', '#/admin/audit']) {
      assert.equal(route.routeHash(route.parseRoute(hash)), hash);
    }
    assert.deepEqual(route.parseRoute(''), { page: 'chat' });
    assert.deepEqual(route.parseRoute('#/nowhere'), { page: 'chat' });
    assert.equal(route.routeHash({ page: 'chat' }), '');
  });

  test('a memory to show rides on the Memory page, as an id only; anything else in its place is left out', () => {
    assert.deepEqual(route.parseRoute('#/memories?focus=mem_d7b496e085f4633fb9c1dffd'), { page: 'memories', focus: 'mem_d7b496e085f4633fb9c1dffd' });
    assert.equal(route.memoryLink('mem_abc'), '#/memories?focus=mem_abc');
    assert.deepEqual(route.parseRoute(route.memoryLink('mem_abc')), { page: 'memories', focus: 'mem_abc' });
    for (const hash of ['#/memories?focus=', '#/memories?focus=tea%20with%20lemon', '#/memories?focus=note_4', '#/memories?q=mem_abc']) {
      assert.deepEqual(route.parseRoute(hash), { page: 'memories' }, hash);
    }
    assert.deepEqual(route.parseRoute('#/notes?focus=mem_abc'), { page: 'notes' }, 'only the Memory page takes one');
    assert.deepEqual(route.withoutFocus({ page: 'memories', focus: 'mem_abc' }), { page: 'memories' });
    assert.deepEqual(route.withoutFocus({ page: 'admin', section: 'models' }), { page: 'admin', section: 'models' });
  });

  test('a conversation to open (a task notification\'s) rides on the conversation page, as an id only', () => {
    const id = 'chat_0123456789abcdef01234567';
    assert.deepEqual(route.parseRoute(`#/?open=${id}`), { page: 'chat', open: id });
    assert.equal(route.routeHash({ page: 'chat', open: id }), `#/?open=${id}`);
    for (const hash of ['#/?open=', '#/?open=chat_xyz', '#/?open=mem_d7b496e085f4633fb9c1dffd', `#/notes?open=${id}`]) {
      assert.equal(route.parseRoute(hash).open, undefined, hash);
    }
    assert.deepEqual(route.withoutFocus({ page: 'chat', open: id }), { page: 'chat' });
  });

  test('an unknown administration section opens people', () => {
    assert.deepEqual(route.parseRoute('#/admin'), { page: 'admin', section: 'people' });
    assert.deepEqual(route.parseRoute('#/admin/secrets'), { page: 'admin', section: 'people' });
  });
});

describe('notices in words', () => {
  const names = {
    providers: new Map([['provider_1', 'old name']]),
    agents: new Map([['main', 'Skald']]),
  };
  const ada = { id: 'user_1', name: 'Ada' };

  test('a provider change names who changed what, by the provider\'s current name', () => {
    const view = notices.viewNotice(
      {
        id: 7,
        kind: 'provider_changed',
        created_at: '2026-01-01T00:00:00Z',
        body: { provider: 'provider_1', provider_name: 'home', base_url: 'http://10.0.0.2/v1', key_changed: true, trusted_lan: null, models_changed: false, changed_by: ada },
      },
      names,
    );
    assert.equal(view.kind, 'provider_changed');
    assert.equal(view.who, 'Ada');
    assert.equal(view.subject, 'home');
    assert.deepEqual(view.changes, ['address', 'key']);
  });

  test('a renamed provider says so, by its new name', () => {
    const view = notices.viewNotice(
      { id: 8, kind: 'provider_changed', created_at: '', body: { provider: 'provider_1', name: 'den', provider_name: 'den', key_changed: false, models_changed: false, changed_by: ada } },
      names,
    );
    assert.equal(view.subject, 'den');
    assert.deepEqual(view.changes, ['name']);
  });

  test('an agent change names the person it carries; an edit on disk has no one; a removed provider keeps its name', () => {
    const agent = notices.viewNotice({ id: 1, kind: 'agent_changed', created_at: '', body: { agent: 'main', hash: 'h', source: 'app', changed_by: ada } }, names);
    assert.deepEqual([agent.who, agent.subject, agent.source], ['Ada', 'Skald', 'app']);
    const disk = notices.viewNotice({ id: 4, kind: 'agent_changed', created_at: '', body: { agent: 'main', hash: 'h', source: 'disk', changed_by: null } }, names);
    assert.deepEqual([disk.who, disk.source], [null, 'disk']);
    const gone = notices.viewNotice({ id: 2, kind: 'provider_deleted', created_at: '', body: { provider: 'provider_9', provider_name: 'cloud', changed_by: ada } }, names);
    assert.deepEqual([gone.who, gone.subject], ['Ada', 'cloud']);
    assert.equal(notices.viewNotice({ id: 3, kind: 'surprise', created_at: '', body: null }, names).kind, 'other');
  });

  test('a job missed while Skald was closed says how often and when last, never what it says', () => {
    const body = { job: 'job_1', kind: 'reminder', count: 3, more: false, last: '2027-01-01T07:00:00Z', zone: 'UTC', ran: true };
    const view = notices.viewNotice({ id: 9, kind: 'job_missed', created_at: '', body }, names);
    assert.equal(view.kind, 'job_missed');
    assert.deepEqual(view.missed, { count: 3, more: false, last: '2027-01-01T07:00:00Z', ran: true });
  });
});

describe('reordering approval rules', () => {
  const rule = (id, priority, tool = `t${id}`) => ({ id, priority, tool, effect: 'allow', created_by: '', created_at: '' });

  test('rules of different priorities swap them', () => {
    const changes = rules.moveRule([rule(1, 10), rule(2, 20), rule(3, 30)], 3, -1);
    assert.deepEqual(changes.map((c) => [c.rule.id, c.priority]), [[3, 20], [2, 30]]);
  });

  test('a rule steps out of a run of equal priorities with one change', () => {
    const changes = rules.moveRule([rule(1, 50), rule(2, 100), rule(3, 100), rule(4, 100)], 4, -1);
    assert.deepEqual(changes.map((c) => [c.rule.id, c.priority]), [[4, 99]]);
    const down = rules.moveRule([rule(1, 100), rule(2, 100), rule(3, 101)], 1, 1);
    assert.deepEqual(down.map((c) => [c.rule.id, c.priority]), [[1, 101]]);
  });

  test('at the end of the range the list is numbered again in the new order', () => {
    const list = [rule(1, 0), rule(2, 0), rule(3, 5)];
    const changes = rules.moveRule(list, 2, -1);
    const after = rules.sortRules(list.map((r) => ({ ...r, priority: changes.find((c) => c.rule.id === r.id)?.priority ?? r.priority })));
    assert.deepEqual(after.map((r) => r.id), [2, 1, 3]);
    assert.deepEqual(after.map((r) => r.priority), [10, 20, 30]);
  });

  test('the ends do not move; a new rule goes after the specific ones, before a catch-all', () => {
    assert.deepEqual(rules.moveRule([rule(1, 10), rule(2, 20)], 1, -1), []);
    assert.equal(rules.nextPriority([rule(1, 100), rule(2, 1000, '*')]), 110);
  });
});

describe('a provider\'s privacy', () => {
  const provider = (base_url, trusted_lan = false) => ({ name: 'p', kind: 'openai', base_url, trusted_lan });

  test('the server\'s verdict wins; without it, loopback is local, a trusted private address too, all else remote', () => {
    assert.equal(providers.providerPrivacy(provider('https://api.example.com/v1'), [{ provider: 'p', privacy: 'local' }]), 'local');
    assert.equal(providers.providerPrivacy(provider('http://127.0.0.1:11434'), []), 'local');
    assert.equal(providers.providerPrivacy(provider('http://localhost:1234/v1'), []), 'local');
    assert.equal(providers.providerPrivacy(provider('http://192.168.1.5:8080/v1'), []), 'remote');
    assert.equal(providers.providerPrivacy(provider('http://192.168.1.5:8080/v1', true), []), 'local');
    assert.equal(providers.providerPrivacy(provider('http://nas.lan:8080/v1', true), []), 'remote');
    assert.equal(providers.providerPrivacy(provider('https://api.openai.com/v1', true), []), 'remote');
  });

  test('only a private address may be marked trusted', () => {
    assert.equal(providers.mayBeTrusted(provider('http://10.1.2.3/v1')), true);
    assert.equal(providers.mayBeTrusted(provider('https://api.openai.com/v1')), false);
  });

  test('the built-in provider\'s models never read pictures; any other provider\'s may', () => {
    assert.equal(providers.mayReadPictures({ kind: 'local' }), false);
    for (const kind of ['openai', 'anthropic', 'ollama']) assert.equal(providers.mayReadPictures({ kind }), true, kind);
  });

  test('telling one model to read pictures sends every model back with all it has, only that one changed', () => {
    const models = [
      { model_id: 'gpt-4o', context_window: 128000, strength: 'strong', tools: true, images: false },
      { model_id: 'gpt-4o-mini', context_window: 64000, strength: 'fast', tools: false, images: true },
    ];
    assert.deepEqual(providers.modelsWithImages(models, 'gpt-4o', true), [
      { id: 'gpt-4o', context_window: 128000, strength: 'strong', tools: true, images: true },
      { id: 'gpt-4o-mini', context_window: 64000, strength: 'fast', tools: false, images: true },
    ]);
    assert.deepEqual(
      providers.modelsWithImages(models, 'gpt-4o-mini', false).map((m) => m.images),
      [false, false],
    );
    assert.equal(models[0].images, false, 'the list shown is left as it is');
  });
});

describe('notes', () => {
  test('a search snippet marks what matched', () => {
    assert.deepEqual(notes.snippetParts('the **blue** thermos and **blue** boots'), [
      { text: 'the ', match: false },
      { text: 'blue', match: true },
      { text: ' thermos and ', match: false },
      { text: 'blue', match: true },
      { text: ' boots', match: false },
    ]);
  });
});

describe('part-1 follow-ups', () => {
  test('a retry is a new turn without a message of its own', () => {
    let t = transcript.addRetrying(transcript.emptyTranscript('chat_1'), 'r1');
    t = transcript.applyEvent(t, { type: 'turn_started', session: 'chat_1', turn: 'turn_2', seq: 1 }).transcript;
    t = transcript.acceptSending(t, 'r1', 'turn_2');
    assert.equal(t.turns.length, 1);
    assert.equal(t.turns[0].userText, null);
    assert.equal(t.turns[0].id, 'turn_2');
  });

  test('another version replaces the turn it stands beside and every turn after it', () => {
    let t = transcript.fromHistory(
      'chat_1',
      [
        { id: 1, turn_id: 't1', role: 'user', text: 'Hi', status: 'sent', created_at: '' },
        { id: 2, turn_id: 't1', role: 'assistant', text: 'Hello', status: 'done', created_at: '' },
        { id: 3, turn_id: 't2', role: 'user', text: 'Plan a trip', status: 'sent', created_at: '' },
        { id: 4, turn_id: 't2', role: 'assistant', text: 'Where to?', status: 'done', created_at: '' },
        { id: 5, turn_id: 't3', role: 'user', text: 'Lyon', status: 'sent', created_at: '' },
        { id: 6, turn_id: 't3', role: 'assistant', text: 'Booked', status: 'done', created_at: '' },
      ],
      'done',
    );
    const again = transcript.addVersion(t, 't2', 'v1', null);
    assert.deepEqual(again.turns.map((turn) => [turn.id, turn.userText, turn.status]), [['t1', 'Hi', 'done'], [null, 'Plan a trip', 'sending']]);
    const edited = transcript.addVersion(t, 't2', 'v2', 'Plan a walk');
    assert.equal(edited.turns[1].userText, 'Plan a walk');
    assert.equal(transcript.addVersion(t, 'elsewhere', 'v3', 'x'), t, 'a turn not shown changes nothing');
    t = transcript.acceptSending(edited, 'v2', 't2b');
    assert.equal(t.turns[1].id, 't2b');
  });

  test('a turn knows where it stands among its versions', () => {
    const versions = [{ turn: 't2b', versions: ['t2', 't2b', 't2c'] }];
    assert.deepEqual(transcript.versionPlace(versions, 't2b'), { index: 2, count: 3, previous: 't2', next: 't2c' });
    assert.deepEqual(transcript.versionPlace([{ turn: 't2', versions: ['t2', 't2b'] }], 't2'), { index: 1, count: 2, previous: null, next: 't2b' });
    assert.equal(transcript.versionPlace(versions, 't1'), null);
    assert.equal(transcript.versionPlace(versions, null), null);
  });

  test('the badge follows the server\'s next model exactly', () => {
    assert.deepEqual(privacy.badgeForNextModel({ name: 'home/m', provider: 'home', privacy: 'local' }), { kind: 'private' });
    assert.deepEqual(privacy.badgeForNextModel({ name: 'openai/m', provider: 'openai', privacy: 'remote' }), { kind: 'remote', providers: ['openai'], certain: true });
    assert.deepEqual(privacy.badgeForNextModel(null), { kind: 'none' });
  });
});
