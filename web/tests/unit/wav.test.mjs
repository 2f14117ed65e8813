// The WAV file the microphone's recording is sent as: one channel of 16-bit PCM at the
// rate it was captured, with a header the server's reader takes.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { loadModules } from './load.mjs';

let wav;

before(async () => {
  ({ wav } = await loadModules({ wav: 'audio/wav.ts' }));
});

describe('a recording as a WAV file', () => {
  test('the header names PCM, one channel, 16 bits and the rate; the samples follow', async () => {
    const blob = wav.encodeWav([new Float32Array([0, 0.5, -0.5]), new Float32Array([1, -1, 2])], 48_000);
    assert.equal(blob.type, 'audio/wav');
    const view = new DataView(await blob.arrayBuffer());
    const text = (at, n) => String.fromCharCode(...Array.from({ length: n }, (_, i) => view.getUint8(at + i)));
    assert.equal(text(0, 4), 'RIFF');
    assert.equal(view.getUint32(4, true), 36 + 12);
    assert.equal(text(8, 8), 'WAVEfmt ');
    assert.deepEqual(
      [view.getUint16(20, true), view.getUint16(22, true), view.getUint32(24, true), view.getUint32(28, true), view.getUint16(32, true), view.getUint16(34, true)],
      [1, 1, 48_000, 96_000, 2, 16],
    );
    assert.equal(text(36, 4), 'data');
    assert.equal(view.getUint32(40, true), 12);
    const samples = Array.from({ length: 6 }, (_, i) => view.getInt16(44 + i * 2, true));
    assert.deepEqual(samples, [0, 16384, -16384, 32767, -32768, 32767], 'full scale is clamped, never wrapped');
  });

  test('nothing heard is a valid, empty file', async () => {
    const blob = wav.encodeWav([], 16_000);
    assert.equal(blob.size, 44);
  });
});
