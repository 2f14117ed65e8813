// The page's pure state: how a conversation is built from history and live events,
// what the privacy badge may claim, and the password hint's rules.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { loadModule } from './load.mjs';

let transcript;
let privacy;
let password;

before(async () => {
  transcript = await loadModule('state/transcript.ts');
  privacy = await loadModule('state/privacy.ts');
  password = await loadModule('state/password.ts');
});

const row = (id, turn, role, status, extra = {}) => ({ id, turn_id: turn, role, text: '', status, created_at: '', ...extra });
const event = (type, seq, extra = {}) => ({ type, session: 'chat_1', turn: 'turn_1', seq, ...extra });

describe('a conversation from its history', () => {
  test('tool calls get their results, and the turn its end', () => {
    const rows = [
      row(1, 'turn_1', 'user', 'sent', { text: 'note this' }),
      row(2, 'turn_1', 'assistant', 'tool_calls', { text: 'Sure.', tool_calls: [{ id: 'call_1', name: 'note_write', arguments: '{}' }], model: 'p/m' }),
      row(3, 'turn_1', 'tool', 'ok', { text: 'saved', tool_call_id: 'call_1' }),
      row(4, 'turn_1', 'assistant', 'done', { text: 'Done.' }),
    ];
    const [turn] = transcript.fromHistory('chat_1', rows, 'done').turns;
    assert.equal(turn.userText, 'note this');
    assert.equal(turn.status, 'done');
    assert.equal(turn.model, 'p/m');
    assert.deepEqual(turn.items.map((i) => i.kind), ['text', 'tool', 'text']);
    assert.equal(turn.items[1].status, 'ok');
    assert.equal(turn.items[1].result, 'saved');
  });

  test('a last turn without its end runs or waits as the session says; an older one was cut off', () => {
    const rows = [row(1, 'turn_0', 'user', 'sent'), row(2, 'turn_1', 'user', 'sent')];
    const turns = transcript.fromHistory('chat_1', rows, 'parked').turns;
    assert.deepEqual(turns.map((t) => t.status), ['error', 'parked']);
    assert.deepEqual(transcript.fromHistory('chat_1', rows, 'running').turns.map((t) => t.status), ['error', 'running']);
  });

  test('a session read just before a new turn began does not end that turn', () => {
    // The history has the new message; the session still says how the turn before ended.
    const rows = [row(1, 'turn_0', 'user', 'sent'), row(2, 'turn_0', 'assistant', 'done', { text: 'Hi.' }), row(3, 'turn_1', 'user', 'sent')];
    for (const stale of ['done', 'stopped', 'error']) {
      const turns = transcript.fromHistory('chat_1', rows, stale).turns;
      assert.deepEqual(turns.map((t) => t.status), ['done', 'running'], stale);
      assert.ok(transcript.activeTurn({ sessionId: 'chat_1', turns }), 'the Stop button stays');
    }
  });

  test('a failed turn keeps the reason', () => {
    const rows = [row(1, 't', 'user', 'sent'), row(2, 't', 'assistant', 'error', { error_code: 'provider_auth', error_message: 'bad key' })];
    assert.deepEqual(transcript.fromHistory('chat_1', rows, 'error').turns[0].error, { code: 'provider_auth', message: 'bad key' });
  });
});

describe('live events', () => {
  test('a message being sent adopts the turn that starts, even before its 202 arrives', () => {
    let t = transcript.addSending(transcript.emptyTranscript('chat_1'), 'k1', 'hi');
    t = transcript.applyEvent(t, event('turn_started', 1, { model: 'p/m' })).transcript;
    t = transcript.applyEvent(t, event('token', 2, { text: 'Hel' })).transcript;
    t = transcript.applyEvent(t, event('token', 3, { text: 'lo' })).transcript;
    t = transcript.acceptSending(t, 'k1', 'turn_1');
    assert.equal(t.turns.length, 1);
    assert.equal(t.turns[0].id, 'turn_1');
    assert.deepEqual(t.turns[0].items, [{ kind: 'text', text: 'Hello' }]);
    const ended = transcript.applyEvent(t, event('turn_ended', 4, { status: 'done', error: null }));
    assert.equal(ended.transcript.turns[0].status, 'done');
    assert.equal(ended.reload, false);
  });

  test('a missed event asks for the history; another conversation\'s events change nothing', () => {
    let t = transcript.addSending(transcript.emptyTranscript('chat_1'), 'k1', 'hi');
    t = transcript.acceptSending(t, 'k1', 'turn_1');
    t = transcript.applyEvent(t, event('turn_started', 1)).transcript;
    assert.equal(transcript.applyEvent(t, event('token', 3, { text: 'x' })).reload, true);
    const other = transcript.applyEvent(t, { ...event('token', 2, { text: 'x' }), session: 'chat_2' });
    assert.equal(other.transcript, t);
  });

  test('tool calls start and finish; text after them starts a new block', () => {
    let t = transcript.acceptSending(transcript.addSending(transcript.emptyTranscript('chat_1'), 'k', 'hi'), 'k', 'turn_1');
    t = transcript.applyEvent(t, event('turn_started', 1)).transcript;
    t = transcript.applyEvent(t, event('tool_call_started', 2, { call: { id: 'c1', name: 'current_time', arguments: '{}' } })).transcript;
    t = transcript.applyEvent(t, event('tool_call_finished', 3, { call_id: 'c1', status: 'ok', result: 'noon' })).transcript;
    t = transcript.applyEvent(t, event('token', 4, { text: 'It is noon.' })).transcript;
    assert.deepEqual(t.turns[0].items.map((i) => i.kind), ['tool', 'text']);
    assert.equal(t.turns[0].items[0].result, 'noon');
  });

  test('reading the history mid-reply keeps the streamed text and newer turns', () => {
    let live = transcript.acceptSending(transcript.addSending(transcript.emptyTranscript('chat_1'), 'k', 'hi'), 'k', 'turn_1');
    live = transcript.applyEvent(live, event('turn_started', 1)).transcript;
    live = transcript.applyEvent(live, event('token', 2, { text: 'partial' })).transcript;
    live = transcript.addSending(live, 'k2', 'next');
    const loaded = transcript.fromHistory('chat_1', [row(1, 'turn_1', 'user', 'sent', { text: 'hi' })], 'running');
    const merged = transcript.mergeLive(loaded, live);
    assert.equal(merged.turns.length, 2);
    assert.deepEqual(merged.turns[0].items, [{ kind: 'text', text: 'partial' }]);
    assert.equal(merged.turns[1].status, 'sending');
    // Once the history has the end, it wins.
    const done = transcript.fromHistory('chat_1', [row(1, 'turn_1', 'user', 'sent'), row(2, 'turn_1', 'assistant', 'done', { text: 'full' })], 'done');
    assert.deepEqual(transcript.mergeLive(done, live).turns[0].items, [{ kind: 'text', text: 'full' }]);
  });

  test('a page of the latest turns read again keeps the earlier turns on screen before it', () => {
    const rows = (from, to) =>
      Array.from({ length: to - from + 1 }, (_, i) => [
        row(2 * (from + i), `turn_${from + i}`, 'user', 'sent', { text: `q${from + i}` }),
        row(2 * (from + i) + 1, `turn_${from + i}`, 'assistant', 'done', { text: `a${from + i}` }),
      ]).flat();
    const latest = transcript.fromHistory('chat_1', rows(5, 8), 'done');
    // An earlier page: its last turn is not the conversation's last, so one cut off is no longer running.
    const earlierRows = [...rows(1, 3), row(8, 'turn_4', 'user', 'sent', { text: 'q4' })];
    const earlier = transcript.fromHistory('chat_1', earlierRows, 'done', true);
    assert.equal(earlier.turns.at(-1).status, 'error');
    assert.equal(transcript.fromHistory('chat_1', earlierRows, 'running').turns.at(-1).status, 'running');
    let shown = transcript.withEarlier(latest, earlier);
    assert.deepEqual(shown.turns.map((t) => t.id), ['turn_1', 'turn_2', 'turn_3', 'turn_4', 'turn_5', 'turn_6', 'turn_7', 'turn_8']);
    assert.equal(transcript.withEarlier(shown, earlier).turns.length, 8, 'a page read twice is not shown twice');
    // A new turn, then the latest page again (it starts one turn later): nothing is lost or doubled.
    shown = transcript.addSending(shown, 'k9', 'q9');
    const again = transcript.fromHistory('chat_1', rows(6, 9), 'done');
    const merged = transcript.mergeLive(again, transcript.acceptSending(shown, 'k9', 'turn_9'));
    assert.deepEqual(merged.turns.map((t) => t.id), ['turn_1', 'turn_2', 'turn_3', 'turn_4', 'turn_5', 'turn_6', 'turn_7', 'turn_8', 'turn_9']);
    assert.equal(merged.turns.at(-1).key, 'k9');
    assert.equal(transcript.turnsIn(rows(6, 9)), 4);
  });

  test('a turn on screen keeps its key when the history is read, ended or not', () => {
    let live = transcript.acceptSending(transcript.addSending(transcript.emptyTranscript('chat_1'), 'k', 'hi'), 'k', 'turn_1');
    live = transcript.applyEvent(live, event('turn_started', 1)).transcript;
    const running = transcript.fromHistory('chat_1', [row(1, 'turn_1', 'user', 'sent', { text: 'hi' })], 'running');
    assert.equal(running.turns[0].key, 'turn_1', 'a turn read from the history alone is keyed by its id');
    assert.equal(transcript.mergeLive(running, live).turns[0].key, 'k');
    const failed = transcript.fromHistory(
      'chat_1',
      [row(1, 'turn_1', 'user', 'sent', { text: 'hi' }), row(2, 'turn_1', 'assistant', 'error', { error_code: 'auth', error_message: 'refused' })],
      null,
    );
    const merged = transcript.mergeLive(failed, live);
    assert.equal(merged.turns[0].key, 'k');
    assert.equal(merged.turns[0].status, 'error');
    assert.deepEqual(merged.turns[0].error, { code: 'auth', message: 'refused' });
  });
});

describe('the privacy badge', () => {
  const local = { name: 'home/llama', provider: 'home', privacy: 'local' };
  const remote = { name: 'cloud/gpt', provider: 'cloud', privacy: 'remote' };

  test('"Private to you" only when the words stay here', () => {
    assert.deepEqual(privacy.badgeForModel('home/llama', [local, remote]), { kind: 'private' });
    assert.deepEqual(privacy.badgeForNext(null, [local]), { kind: 'private' });
  });

  test('otherwise it names the provider, also when it only may be chosen', () => {
    assert.deepEqual(privacy.badgeForModel('cloud/gpt', [local, remote]), { kind: 'remote', providers: ['cloud'], certain: true });
    assert.deepEqual(privacy.badgeForNext(null, [local, remote]), { kind: 'remote', providers: ['cloud'], certain: false });
    assert.deepEqual(privacy.badgeForNext('home/llama', [local, remote]), { kind: 'private' });
  });

  test('a model the page does not know is never called private', () => {
    assert.deepEqual(privacy.badgeForModel('gone/model', [local]), { kind: 'remote', providers: ['gone'], certain: true });
  });
});

describe('the password hint', () => {
  test('mirrors the server: length, variety, and not the name', () => {
    assert.deepEqual(password.judgePassword('short', 'Ada'), { ok: false, why: 'short', missing: 7 });
    assert.equal(password.judgePassword('aaaaabbbbbbbb', 'Ada').why, 'repetitive');
    assert.equal(password.judgePassword('my name is ada ok', 'Ada').why, 'contains-name');
    // The server's common list, however it is written.
    assert.equal(password.judgePassword('password1234', 'Ada').why, 'common');
    assert.equal(password.judgePassword('Password-1234', 'Ada').why, 'common');
    assert.deepEqual(password.judgePassword('otter lantern quietly', 'Ada'), { ok: true });
  });
});

describe('sub-agent frames', () => {
  test('a frame\'s words and rows stay out of the reply; its events keep the count', () => {
    let t = transcript.acceptSending(transcript.addSending(transcript.emptyTranscript('chat_1'), 'k', 'hi'), 'k', 'turn_1');
    t = transcript.applyEvent(t, event('turn_started', 1)).transcript;
    t = transcript.applyEvent(t, event('tool_call_started', 2, { call: { id: 'c1', name: 'call_agent', arguments: '{}' } })).transcript;
    t = transcript.applyEvent(t, event('frame_started', 3, { agent: 'researcher', call_id: 'c1' })).transcript;
    const inner = transcript.applyEvent(t, event('token', 4, { text: 'inner words', frame: 'frame_1' }));
    assert.equal(inner.reload, false);
    assert.deepEqual(inner.transcript.turns[0].items.map((i) => i.kind), ['tool']);
    const rows = [
      row(1, 'turn_1', 'user', 'sent'),
      row(2, 'turn_1', 'assistant', 'done', { text: 'inner', frame_id: 'frame_1' }),
    ];
    assert.deepEqual(transcript.fromHistory('chat_1', rows, 'running').turns[0].items, []);
  });
});
