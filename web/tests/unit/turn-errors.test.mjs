// Why a reply failed, in words, with the next step for whoever reads it.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { loadModule } from './load.mjs';

describe('a failed reply explained', () => {
  let explainTurnError;
  before(async () => {
    ({ explainTurnError } = await loadModule('i18n/turn-errors.ts'));
  });

  const refused = { code: 'provider_unavailable', message: 'scripted cannot be reached or is overloaded (could not connect: Connection refused (os error 111)). Try again later.' };

  test('a member is told in words, and whom to ask by name, with the log line kept as the detail', () => {
    const said = explainTurnError(refused, { manages: false, administrators: ['Ada'] });
    assert.equal(said.what, 'The model did not answer: Skald could not reach it.');
    assert.equal(said.next, 'Ask Ada, who manages Skald, to check the model; then try again.');
    assert.match(said.detail, /os error 111/);
    assert.doesNotMatch(said.what + said.next, /os error|Connection refused/);
    assert.equal(explainTurnError(refused, { manages: false, administrators: ['Ada', 'Bo', 'Cy'] }).next, 'Ask Ada, Bo or Cy, who manages Skald, to check the model; then try again.');
  });

  test('an administrator is sent to the page that fixes it', () => {
    assert.equal(explainTurnError(refused, { manages: true, administrators: ['Ada'] }).next, 'Check it on Administration → Models, then try again.');
  });

  test('a failure the server already words for people is shown as it is, with no detail', () => {
    const said = explainTurnError({ code: 'provider_rate_limited', message: 'scripted is rate-limiting requests. Try again in 12 seconds.' }, { manages: false, administrators: [] });
    assert.deepEqual(said, { what: 'Scripted is rate-limiting requests. Try again in 12 seconds.', next: '', detail: '' });
    assert.equal(explainTurnError(null, { manages: false, administrators: [] }).what, 'The reply failed.');
  });
});
