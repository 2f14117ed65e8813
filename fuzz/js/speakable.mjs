// Fuzzes the Markdown-to-speech cleaner (web/src/audio/speakable.ts) for a time budget.
//
//   node fuzz/js/speakable.mjs SECONDS SEED_DIR CORPUS_DIR ARTIFACT_DIR
//
// A mutation fuzzer, not a coverage-guided one: the coverage-guided fuzzer for Node on
// npm (Jazzer.js 4) ships its libFuzzer only prebuilt, for a newer C library than Debian
// 12's, and its older releases fetch or build it from outside the package registries.
// Inputs start from the checked-in seeds and the working corpus, and are mutated by
// splicing Markdown tokens, random Unicode (lone surrogates too), deep nesting and very
// long lines. An input that reaches a new "shape" (which tokens it holds, how the output
// looks) joins the working corpus, so later runs build on it.
//
// What must hold of every input (the cleaner's promise: code, addresses and markup are
// never read):
// - it returns, without throwing, within TIME_LIMIT_MS (and the whole run never stalls
//   for STALL_MS: a worker runs the inputs and the main thread watches it);
// - the output holds none of the Markdown characters it strips, and no web address;
// - the output is at most about twice the input (a table's `|` reads as `, `);
// - its sentences, and an answer fed to SentenceFeed as it streams, come out without
//   throwing, and every sentence is non-empty and trimmed.
// A failure is written to ARTIFACT_DIR, printed, and the exit code is 1. The last line is
// `speakable: N executions, R exec/s, C corpus, RESULT`.

import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { tmpdir } from 'node:os';

const TIME_LIMIT_MS = 1000;
const STALL_MS = 10_000;
const MAX_LEN = 64 * 1024;
/** The most inputs kept (the working corpus on disk holds those of up to 4 KiB). */
const MAX_CORPUS = 5000;
const STRIPPED = /[*#`~^<>[\]{}\\|]/u;
// A scheme with its slash, or `www.` with a name after it (`www.,` is no address).
const ADDRESS = /\b(?:https?|ftp|file):\/|\bmailto:[\p{L}\p{N}]|\bwww\.[\p{L}\p{N}]/iu;

const TOKENS = [
  '**', '__', '`', '```', '~~~', '~~', '[', '](', ')', '![', '<b>', '</b>', 'https://', 'www.', '# ', '> ', '- ',
  '1. ', '|', '---', '\n', '    ', '\t', '[x] ', '_', '*', '\\', '…', '{', '^',
  '.', '!', '?', ':', ';', ',', '"', '”', ')', ']', 'http://example.org/a', 'mailto:a@b.c', 'file:///etc',
  '[ref]', '[a][b]', '<a href="x">', '| a | b |', '|---|---|', ' #', '###### ', '>>>', '\u00a0', '\u2028',
  '\u200b', '\ud800', '\udfff', '😀', 'é', '\u0301', '\u202e', '\0', '\r', '\r\n',
];

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');

if (isMainThread) {
  const [seconds = '30', seeds, corpus, artifacts] = process.argv.slice(2);
  if (!seeds || !corpus || !artifacts) {
    console.error('usage: node fuzz/js/speakable.mjs SECONDS SEED_DIR CORPUS_DIR ARTIFACT_DIR');
    process.exit(2);
  }
  mkdirSync(corpus, { recursive: true });
  mkdirSync(artifacts, { recursive: true });
  const moduleFile = await bundle();
  // The input under test, shared so the watchdog can keep it if the worker hangs.
  const shared = new SharedArrayBuffer(4 * 4 + MAX_LEN * 4);
  const worker = new Worker(fileURLToPath(import.meta.url), {
    workerData: { seconds: Number(seconds), seeds, corpus, artifacts, moduleFile, shared },
  });
  const beats = new Int32Array(shared, 0, 4);
  let last = -1;
  let still = 0;
  const watch = setInterval(() => {
    const now = Atomics.load(beats, 0);
    still = now === last ? still + 500 : 0;
    last = now;
    if (still >= STALL_MS) {
      clearInterval(watch);
      const length = Atomics.load(beats, 1);
      const input = Buffer.from(new Uint8Array(shared, 16, length)).toString('utf8');
      const file = save(artifacts, 'timeout', input);
      console.log(`speakable: TIMEOUT: one input ran past ${STALL_MS / 1000} s; kept at ${file}`);
      console.log(`speakable: ${now} executions, - exec/s, - corpus, timeout`);
      worker.terminate().then(() => process.exit(1));
    }
  }, 500);
  worker.on('message', (message) => {
    if (typeof message === 'string') console.log(message);
    else process.exit(message.exit);
  });
  worker.on('error', (err) => {
    console.error(`speakable: the fuzzer itself failed: ${err.stack ?? err}`);
    process.exit(1);
  });
  worker.on('exit', (code) => {
    clearInterval(watch);
    process.exit(code);
  });
} else {
  await fuzz(workerData);
}

/** speakable.ts bundled by the web's own esbuild into a module in a temporary folder. */
async function bundle() {
  const require = createRequire(path.join(root, 'web/package.json'));
  const { build } = require('esbuild');
  const result = await build({
    entryPoints: [path.join(root, 'web/src/audio/speakable.ts')],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    write: false,
    logLevel: 'error',
  });
  const dir = path.join(tmpdir(), `skald-fuzz-speakable-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'speakable.mjs');
  writeFileSync(file, result.outputFiles[0].text);
  return file;
}

function save(dir, kind, input) {
  const file = path.join(dir, `${kind}-${createHash('sha1').update(input).digest('hex')}`);
  writeFileSync(file, input);
  return file;
}

async function fuzz({ seconds, seeds, corpus, artifacts, moduleFile, shared }) {
  const { speakable, sentencesOf, SentenceFeed } = await import(pathToFileURL(moduleFile).href);
  const beats = new Int32Array(shared, 0, 4);
  const current = new Uint8Array(shared, 16, MAX_LEN * 4);
  const encoder = new TextEncoder();

  const inputs = [];
  for (const dir of [seeds, corpus]) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir).sort()) inputs.push(readFileSync(path.join(dir, name), 'utf8'));
  }
  if (inputs.length === 0) inputs.push('# A heading\n\nSome **bold** text and a [link](https://example.org).');
  const shapes = new Set(inputs.map((input) => shapeOf(input, safe(speakable, input))));

  let executions = 0;
  let seed = Number(process.env.SKALD_FUZZ_SEED ?? Date.now()) >>> 0;
  const random = () => {
    // xorshift32: fast, and a run can be replayed with SKALD_FUZZ_SEED.
    seed ^= seed << 13;
    seed >>>= 0;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    seed >>>= 0;
    return seed / 0x1_0000_0000;
  };
  const pick = (list) => list[Math.floor(random() * list.length)];
  const started = performance.now();
  const deadline = started + seconds * 1000;

  class Failed extends Error {}
  const fail = (why, input, detail) => {
    const file = save(artifacts, 'crash', input);
    parentPort.postMessage(`speakable: FAILED: ${why}\n  input kept at ${file}\n  ${detail}`.trimEnd());
    report('crash');
    parentPort.postMessage({ exit: 1 });
    throw new Failed(why);
  };
  const report = (result) => {
    const elapsed = (performance.now() - started) / 1000;
    parentPort.postMessage(
      `speakable: ${executions} executions, ${Math.round(executions / Math.max(elapsed, 0.001))} exec/s, ${inputs.length} corpus, ${result}`,
    );
  };

  try {
    loop();
  } catch (err) {
    if (err instanceof Failed) return;
    throw err;
  }
  report('ok');
  parentPort.postMessage({ exit: 0 });

  function loop() {
  while (performance.now() < deadline) {
    const input = mutate(pick(inputs), pick, random, inputs).slice(0, MAX_LEN);
    const bytes = encoder.encode(input);
    current.set(bytes.subarray(0, current.length));
    Atomics.store(beats, 1, Math.min(bytes.length, current.length));
    let out;
    const before = performance.now();
    try {
      out = speakable(input);
      const sentences = sentencesOf(out);
      for (const sentence of sentences) {
        if (sentence === '' || sentence !== sentence.trim()) fail('a sentence is empty or untrimmed', input, JSON.stringify(sentence));
      }
      if (executions % 16 === 0) {
        // The answer as it streams, cut every so often.
        const feed = new SentenceFeed();
        const step = Math.max(1, Math.floor(input.length / 8));
        for (let at = step; at < input.length; at += step) feed.update(input.slice(0, at));
        feed.end(input);
      }
    } catch (err) {
      if (err instanceof Failed) throw err;
      fail(`it threw ${err?.name ?? err}`, input, String(err?.stack ?? err));
    }
    const took = performance.now() - before;
    executions += 1;
    Atomics.store(beats, 0, executions);
    if (took > TIME_LIMIT_MS) fail(`one input took ${Math.round(took)} ms (limit ${TIME_LIMIT_MS} ms)`, input, `length ${input.length}`);
    const stripped = STRIPPED.exec(out);
    if (stripped) fail(`the output reads the markup ${JSON.stringify(stripped[0])}`, input, `output: ${JSON.stringify(out.slice(0, 400))}`);
    const address = ADDRESS.exec(out);
    if (address) fail(`the output reads a web address (${JSON.stringify(address[0])})`, input, `output: ${JSON.stringify(out.slice(0, 400))}`);
    if (out.length > 2 * input.length + 1) fail(`the output (${out.length}) is more than twice the input (${input.length})`, input, '');

    const shape = shapeOf(input, out);
    if (!shapes.has(shape) && inputs.length < MAX_CORPUS) {
      shapes.add(shape);
      inputs.push(input);
      if (input.length <= 4096) save(corpus, 'input', input);
    }
  }
  }
}

function safe(fn, input) {
  try {
    return fn(input);
  } catch {
    return '';
  }
}

/** Which tokens the input holds and roughly how the output looks: the corpus keeps one input per shape. */
function shapeOf(input, out) {
  let bits = 0;
  TOKENS.forEach((token, index) => {
    if (index < 20 && input.includes(token)) bits |= 1 << index;
  });
  const lines = Math.min(3, out.split('\n').length);
  const ratio = input.length === 0 ? 0 : Math.min(2, Math.floor((2 * out.length) / input.length));
  return `${bits}:${lines}:${ratio}`;
}


/** One to four edits of `input`. */
function mutate(input, pick, random, inputs) {
  let text = input;
  const edits = 1 + Math.floor(random() * 4);
  for (let n = 0; n < edits; n += 1) {
    const at = Math.floor(random() * (text.length + 1));
    switch (Math.floor(random() * 9)) {
      case 0:
      case 1: // a Markdown token
        text = text.slice(0, at) + pick(TOKENS) + text.slice(at);
        break;
      case 2: { // delete a run
        const length = Math.floor(random() * 16);
        text = text.slice(0, at) + text.slice(at + length);
        break;
      }
      case 3: { // a run repeated
        const length = 1 + Math.floor(random() * 8);
        const times = 2 + Math.floor(random() * 32);
        text = text.slice(0, at) + text.slice(at, at + length).repeat(times) + text.slice(at);
        break;
      }
      case 4: { // splice with another input
        const other = pick(inputs);
        const from = Math.floor(random() * (other.length + 1));
        text = text.slice(0, at) + other.slice(from, from + 1 + Math.floor(random() * 64)) + text.slice(at);
        break;
      }
      case 5: { // random code units, lone surrogates included
        let units = '';
        const count = 1 + Math.floor(random() * 6);
        for (let i = 0; i < count; i += 1) {
          units += String.fromCharCode(random() < 0.5 ? Math.floor(random() * 128) : Math.floor(random() * 0x10000));
        }
        text = text.slice(0, at) + units + text.slice(at);
        break;
      }
      case 6: { // deep nesting
        const token = pick(['>', '[', '*', '_', '`', '(', '- ', '#', '~', '<', '|', '  ']);
        const depth = 16 + Math.floor(random() * 2000);
        text = text.slice(0, at) + token.repeat(depth) + 'x' + text.slice(at);
        break;
      }
      case 7: // a very long line
        if (random() < 0.05) text = text.slice(0, at) + pick(TOKENS).repeat(1 + Math.floor(random() * 8000)) + text.slice(at);
        break;
      default: { // swap two runs
        const other = Math.floor(random() * (text.length + 1));
        const [a, b] = at < other ? [at, other] : [other, at];
        text = text.slice(b) + text.slice(a, b) + text.slice(0, a);
      }
    }
  }
  return text;
}
