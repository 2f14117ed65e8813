// Locking ends what the page was still asking with the old bearer: the walkthrough once
// saw a conversation reload race the lock and come back 401.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadModule } from './load.mjs';

const client = await loadModule('api/client.ts');

/** A fetch that answers only when told to, and records what was asked and cancelled. */
function heldFetch() {
  const asked = [];
  const fetch = (url, init) =>
    new Promise((resolve, reject) => {
      const entry = { path: new URL(url).pathname, method: init.method, cancelled: false };
      asked.push(entry);
      if (entry.path === '/api/lock') {
        resolve(new Response(null, { status: 204 }));
        return;
      }
      init.signal?.addEventListener('abort', () => {
        entry.cancelled = true;
        reject(new DOMException('aborted', 'AbortError'));
      });
    });
  return { asked, fetch };
}

test('a lock cancels the reads still in flight and refuses new ones without sending them', async () => {
  const { asked, fetch } = heldFetch();
  const api = new client.ApiClient('token', { baseUrl: 'http://127.0.0.1:9', fetch });
  const page = new AbortController();
  const reading = api.session('chat_1', page.signal).then(
    () => assert.fail('the read was cancelled'),
    (e) => e,
  );
  await api.lock();
  const error = await reading;
  assert.equal(error.code, 'aborted');
  const later = await api.sessions().then(
    () => assert.fail('a read after the lock is refused'),
    (e) => e,
  );
  assert.equal(later.code, 'aborted');
  assert.deepEqual(
    asked.map((a) => `${a.method} ${a.path}${a.cancelled ? ' cancelled' : ''}`),
    ['GET /api/sessions/chat_1 cancelled', 'POST /api/lock'],
  );
  assert.equal(page.signal.aborted, false, "the page's own signal is left alone");
});

test("a request the page cancels itself is cancelled, and the client still works", async () => {
  const { asked, fetch } = heldFetch();
  const api = new client.ApiClient('token', { baseUrl: 'http://127.0.0.1:9', fetch });
  const page = new AbortController();
  const reading = api.session('chat_2', page.signal).catch((e) => e);
  page.abort();
  assert.equal((await reading).code, 'aborted');
  await api.lock();
  assert.deepEqual(asked.map((a) => a.path), ['/api/sessions/chat_2', '/api/lock']);
});
