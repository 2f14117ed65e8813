// What of an answer is read aloud: Markdown turned into plain sentences, with no code,
// address or markup read, and an answer read sentence by sentence as it streams.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { loadModules } from './load.mjs';

let speech;

before(async () => {
  ({ speech } = await loadModules({ speech: 'audio/speakable.ts' }));
});

describe('an answer made speakable', () => {
  test('headings, lists, emphasis and links read as words; code blocks, images and addresses not at all', () => {
    const answer = [
      '# Your **shopping** list',
      '',
      'Here is what you need, see [the recipe](https://example.com/bread) or https://example.org/x.',
      '',
      '- 500 g of *flour*',
      '- `yeast`, dried',
      '1. Mix ~~quickly~~ slowly',
      '',
      '```python',
      'print("never read")',
      '```',
      '',
      '![a photo](https://example.com/p.png)',
      '> Bake for 30 minutes!',
      '',
      '| Item | Price |',
      '|------|------:|',
      '| Milk | 1.20 |',
      '',
      '---',
    ].join('\n');
    assert.equal(
      speech.speakable(answer),
      [
        'Your shopping list.',
        'Here is what you need, see the recipe or.',
        '500 g of flour.',
        'yeast, dried.',
        'Mix quickly slowly.',
        'Bake for 30 minutes!',
        'Item, Price.',
        'Milk, 1.20.',
      ].join('\n'),
    );
  });

  test('no asterisk, hash, backtick or address is ever left to read', () => {
    const said = speech.speakable('**Note:** run `ls -l` #now and see <https://a.example/b> or www.example.com * ok');
    assert.doesNotMatch(said, /[*#`<>]|https?:|www\./u);
    assert.match(said, /Note: run ls -l now and see or ok\./u);
  });

  test('an address hidden by markup, or joined again by the tidying, is still not read', () => {
    // Found by the fuzzer (fuzz/js/speakable.mjs): markup removed after the addresses were.
    for (const line of ['see h__ttps://example.org/a now', 'see `http`://example.org now', 'see www ].example.org now']) {
      assert.doesNotMatch(speech.speakable(line), /https?:|www\./u, line);
    }
  });

  test('a long line of unclosed brackets, spaces or pipes is cleaned in linear time', () => {
    // Found by the fuzzer: each of these took seconds (quadratic backtracking), and the
    // page cleans the whole answer again at every streamed piece.
    const spaces = ' '.repeat(50_000);
    const lines = [
      '![x'.repeat(15_000),
      '[a](b'.repeat(10_000),
      '<a'.repeat(25_000),
      `a${spaces}x`,
      `| a${spaces}x`,
      `|--${spaces}x`,
      `${spaces}:x`,
    ];
    for (const line of lines) {
      const started = performance.now();
      speech.speakable(line);
      const took = performance.now() - started;
      assert.ok(took < 250, `${JSON.stringify(line.slice(0, 8))}… (${line.length} characters) took ${Math.round(took)} ms`);
    }
  });

  test('a link whose address holds parentheses reads as its words', () => {
    assert.equal(speech.speakable('See [Pluto](https://en.wikipedia.org/wiki/Pluto_(planet)) too'), 'See Pluto too.');
  });

  test('a code block still open at the end is not read', () => {
    assert.equal(speech.speakable('Run this:\n```sh\nrm -rf /tmp/x'), 'Run this:');
  });

  test('sentences end at stops followed by a space, not inside numbers', () => {
    assert.deepEqual(speech.sentencesOf('It costs 3.50 euros. Really? Yes!\nA new line'), [
      'It costs 3.50 euros.',
      'Really?',
      'Yes!',
      'A new line',
    ]);
  });
});

describe('an answer read as it streams', () => {
  test('each sentence is given once, when the text after it shows it complete', () => {
    const feed = new speech.SentenceFeed();
    const answer = 'The shop opens at 9.30 tomorrow. Bring the list! And the bags';
    const given = [];
    for (let end = 1; end <= answer.length; end++) given.push(...feed.update(answer.slice(0, end)));
    assert.deepEqual(given, ['The shop opens at 9.30 tomorrow.', 'Bring the list!']);
    assert.deepEqual(feed.end(answer), ['And the bags.']);
    assert.deepEqual(feed.end(answer), [], 'nothing is given twice');
  });

  test('a long answer comes out sentence by sentence, all of it, in order', () => {
    const sentences = Array.from({ length: 300 }, (_, i) => `Sentence number ${i + 1} has a few words in it.`);
    const answer = sentences.join(' ');
    const feed = new speech.SentenceFeed();
    const given = [];
    for (let end = 7; end < answer.length; end += 7) given.push(...feed.update(answer.slice(0, end)));
    given.push(...feed.end(answer));
    assert.deepEqual(given, sentences);
  });
});
