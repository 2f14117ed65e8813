// Reading replies aloud as they stream: which sentences are asked of the speech engine,
// and that a stopped reading stays stopped while its reply goes on streaming.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { loadModule } from './load.mjs';

let ReadAloudController;

before(async () => {
  ({ ReadAloudController } = await loadModule('controllers/read-aloud-controller.ts'));
});

/**
 * A controller on a bare host, its login's speech requests noted: they never answer, or
 * with `failing` they fail at once.
 */
function reader({ failing = false } = {}) {
  const asked = [];
  const host = { addController() {}, requestUpdate() {} };
  const answer = () => (failing ? Promise.reject(new Error('the speech engine stopped')) : new Promise(() => {}));
  const client = { speak: (text) => (asked.push(text), answer()) };
  const login = { client, voice: { readAloud: true, voice: '', speed: 1 } };
  return { controller: new ReadAloudController(host, () => login), asked };
}

const turn = (text, status = 'running') => ({ key: 'k1', id: 'turn_1', userText: 'hi', items: [{ kind: 'text', text }], status, model: null, error: null, seq: 0 });

describe('reading a reply as it streams', () => {
  test('each sentence is asked for once it is complete, the next ones fetched ahead', () => {
    const { controller, asked } = reader();
    controller.follow(turn('One is here. Two'), false);
    assert.deepEqual(asked, ['One is here.']);
    controller.follow(turn('One is here. Two is here. Three'), false);
    assert.deepEqual(asked, ['One is here.', 'Two is here.']);
    assert.equal(controller.reading, 'turn_1');
  });

  test('stopped while the reply streams, the reading is not taken up again by what follows', () => {
    const { controller, asked } = reader();
    controller.follow(turn('One is here. Two'), false);
    assert.equal(controller.stop(), true);
    assert.equal(controller.reading, null);
    controller.follow(turn('One is here. Two is here. Three'), false);
    controller.follow(turn('One is here. Two is here. Three is here.', 'done'), true);
    assert.deepEqual(asked, ['One is here.'], 'nothing more was asked for');
    assert.equal(controller.reading, null);
    // The next reply is read as usual.
    controller.follow({ ...turn('Four is here. Five'), key: 'k2', id: 'turn_2' }, false);
    assert.deepEqual(asked, ['One is here.', 'Four is here.']);
  });

  test('a reading the engine failed is not begun again by what the reply streams next', async () => {
    const { controller, asked } = reader({ failing: true });
    controller.follow(turn('One is here. Two'), false);
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.equal(controller.problem, 'the speech engine stopped');
    assert.equal(controller.reading, null);
    controller.follow(turn('One is here. Two is here. Three'), false);
    assert.deepEqual(asked, ['One is here.'], 'the reply was not read again from its start');
  });
});
