// Telling speech from quiet for hands-free turns: speech is noticed a moment after it
// begins and its end after a pause, a steady noise or a click is not speech, and while
// Skald talks only a plainer voice interrupts.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { loadModule } from './load.mjs';

const RATE = 16_000;
let detection;

before(async () => {
  detection = await loadModule('audio/end-of-speech.ts');
});

/** A deterministic noise source (so a failure can be replayed). */
function noise(seed) {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 30 - 1;
  };
}

/**
 * Samples: each part `[seconds, level, syllables?]` is noise at RMS `level`, or with
 * `syllables` a 180 Hz voice at `level` sounding 150 ms then pausing 60 ms.
 */
function signal(parts, seed = 7) {
  const random = noise(seed);
  const out = [];
  for (const [seconds, level, syllables] of parts) {
    const frames = Math.round(seconds * RATE);
    for (let i = 0; i < frames; i++) {
      const room = random() * 0.003;
      if (!syllables) {
        out.push(room + random() * level * Math.sqrt(3));
        continue;
      }
      const inSyllable = (i / RATE) % 0.21 < 0.15;
      out.push(room + (inSyllable ? Math.sin((2 * Math.PI * 180 * i) / RATE) * level * Math.SQRT2 : 0));
    }
  }
  return Float32Array.from(out);
}

/** When (in seconds) the detector said what, fed in 4096-sample chunks as the page does. */
function heard(samples, options) {
  const detector = new detection.SpeechDetector(RATE, options);
  const said = [];
  for (let at = 0; at < samples.length; at += 4096) {
    const what = detector.feed(samples.subarray(at, at + 4096));
    if (what) said.push([what, Math.round(((at + 4096) / RATE) * 10) / 10]);
  }
  return said;
}

describe('the end of speech', () => {
  test('speech after quiet is noticed within half a second, and its end after the pause', () => {
    const said = heard(signal([[1, 0.002], [2, 0.2, true], [1.5, 0.002]]));
    assert.equal(said.length, 2, JSON.stringify(said));
    const [[first, startAt], [second, endAt]] = said;
    assert.equal(first, 'start');
    assert.ok(startAt >= 1 && startAt <= 1.6, `speech noticed at ${startAt} s`);
    assert.equal(second, 'end');
    assert.ok(endAt >= 3.8 && endAt <= 4.3, `its end noticed at ${endAt} s`);
  });

  test('the pauses between words do not end it', () => {
    // Four words with 300 ms between them: one utterance.
    const word = [0.5, 0.2, true];
    const gap = [0.3, 0.002];
    const said = heard(signal([[1, 0.002], word, gap, word, gap, word, gap, word, [1.5, 0.002]]));
    assert.deepEqual(
      said.map(([what]) => what),
      ['start', 'end'],
      JSON.stringify(said),
    );
  });

  test('a steady noise, however loud, and a click are not speech', () => {
    assert.deepEqual(heard(signal([[6, 0.05]])), []);
    assert.deepEqual(heard(signal([[1, 0.002], [0.06, 0.4], [2, 0.002]])), []);
  });

  test('a voice too faint to be meant for the computer is not speech', () => {
    assert.deepEqual(heard(signal([[1, 0.0005], [2, 0.007, true], [1, 0.0005]])), []);
  });

  test('while Skald talks, only a plainer voice interrupts', () => {
    const soft = signal([[1, 0.002], [2, 0.025, true], [1.5, 0.002]]);
    assert.equal(heard(soft, detection.CONVERSATION)[0]?.[0], 'start', 'a soft voice is heard when Skald is quiet');
    assert.deepEqual(heard(soft, detection.OVER_PLAYBACK), [], 'but does not interrupt Skald');
    const plain = signal([[1, 0.002], [2, 0.2, true], [1.5, 0.002]]);
    assert.equal(heard(plain, detection.OVER_PLAYBACK)[0]?.[0], 'start');
  });

  test('until speech is judged begun, it says how long ago the stretch it counts began', () => {
    // What a hands-free listener keeps from before a start must reach back this far, or a
    // start judged late (over an answer being read) cuts the first words.
    const detector = new detection.SpeechDetector(RATE, detection.OVER_PLAYBACK);
    const samples = signal([[1, 0.002], [2, 0.2, true], [1.5, 0.002]]);
    let before = null;
    for (let at = 0; at < samples.length; at += 4096) {
      const what = detector.feed(samples.subarray(at, at + 4096));
      const end = (at + 4096) / RATE;
      if (what === 'start') break;
      if (end <= 1) assert.equal(detector.pendingMs, 0, `nothing counted in the quiet before (at ${end} s)`);
      before = { end, pending: detector.pendingMs };
    }
    assert.ok(before !== null && before.end > 1, 'the start came after speech began');
    const since = (before.end - 1) * 1000;
    assert.ok(Math.abs(before.pending - since) <= 40, `counted for ${before.pending} ms, ${since} ms after speech began`);
    assert.equal(detector.speaking, true);
    assert.equal(detector.pendingMs, 0, 'nothing is pending once speech is under way');

    const click = new detection.SpeechDetector(RATE, detection.OVER_PLAYBACK);
    click.feed(signal([[1, 0.002], [0.06, 0.4]]));
    assert.ok(click.pendingMs > 0, 'a click is counted while it sounds');
    click.feed(signal([[1, 0.002]], 9));
    assert.equal(click.pendingMs, 0, 'and forgotten once the quiet has undone it');
  });
});
