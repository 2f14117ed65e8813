// Deleting a temporary chat as the person leaves it: at once when nothing runs; while a
// turn runs the server refuses (409), so the turn is stopped and the deletion asked
// again; one already gone is fine; any other refusal is told, and it never asks forever.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { loadModules } from './load.mjs';

let deleteTemporaryChat;
let ApiError;

before(async () => {
  const loaded = await loadModules({ temporary: 'state/temporary-chat.ts', client: 'api/client.ts' });
  ({ deleteTemporaryChat } = loaded.temporary);
  ({ ApiError } = loaded.client);
});

/** A client whose DELETE answers come from `answers` in turn (a status, or 204), recording the calls. */
function fakeClient(answers, stopAnswer = 204) {
  const calls = [];
  return {
    calls,
    async deleteSession(id) {
      calls.push(`DELETE ${id}`);
      const status = answers.shift() ?? 204;
      if (status !== 204) throw new ApiError(status === 409 ? 'busy' : `http_${status}`, 'refused', status);
    },
    async stop(id) {
      calls.push(`STOP ${id}`);
      if (stopAnswer !== 204) throw new ApiError('no_turn', 'nothing runs', stopAnswer);
    },
  };
}

const noPause = async () => {};

describe('deleting a temporary chat', () => {
  test('is one call when nothing runs in it', async () => {
    const client = fakeClient([204]);
    await deleteTemporaryChat(client, 'chat_t', noPause);
    assert.deepEqual(client.calls, ['DELETE chat_t']);
  });

  test('refused while a turn runs: the turn is stopped, then it is deleted', async () => {
    const client = fakeClient([409, 204]);
    await deleteTemporaryChat(client, 'chat_t', noPause);
    assert.deepEqual(client.calls, ['DELETE chat_t', 'STOP chat_t', 'DELETE chat_t']);
  });

  test('a turn that ended on its own meanwhile (stop refused) still lets it be deleted', async () => {
    const client = fakeClient([409, 204], 409);
    await deleteTemporaryChat(client, 'chat_t', noPause);
    assert.deepEqual(client.calls, ['DELETE chat_t', 'STOP chat_t', 'DELETE chat_t']);
  });

  test('one already gone is what was wanted', async () => {
    const client = fakeClient([404]);
    await deleteTemporaryChat(client, 'chat_t', noPause);
    assert.deepEqual(client.calls, ['DELETE chat_t']);
  });

  test('another refusal is told; a turn that will not stop is not asked about forever', async () => {
    await assert.rejects(deleteTemporaryChat(fakeClient([500]), 'chat_t', noPause), (error) => error.status === 500);
    const stuck = fakeClient([409, 409, 409, 409, 409, 409]);
    await assert.rejects(deleteTemporaryChat(stuck, 'chat_t', noPause), (error) => error.status === 409);
    assert.equal(stuck.calls.filter((call) => call.startsWith('DELETE')).length, 4);
  });
});
