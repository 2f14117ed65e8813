// Deleting a temporary chat as the person leaves it: one call (the server stops a turn
// running in it); one already gone is fine; any other refusal is told.
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
function fakeClient(answers) {
  const calls = [];
  return {
    calls,
    async deleteSession(id) {
      calls.push(`DELETE ${id}`);
      const status = answers.shift() ?? 204;
      if (status !== 204) throw new ApiError(`http_${status}`, 'refused', status);
    },
  };
}

describe('deleting a temporary chat', () => {
  test('is one call when nothing runs in it', async () => {
    const client = fakeClient([204]);
    await deleteTemporaryChat(client, 'chat_t');
    assert.deepEqual(client.calls, ['DELETE chat_t']);
  });

  test('one already gone is what was wanted', async () => {
    const client = fakeClient([404]);
    await deleteTemporaryChat(client, 'chat_t');
    assert.deepEqual(client.calls, ['DELETE chat_t']);
  });

  test('another refusal is told', async () => {
    await assert.rejects(deleteTemporaryChat(fakeClient([500]), 'chat_t'), (error) => error.status === 500);
    await assert.rejects(deleteTemporaryChat(fakeClient([409]), 'chat_t'), (error) => error.status === 409);
  });
});
