// The page's own split of an answer into the sentences it reads aloud, one request each:
// web/src/audio/speakable.ts, bundled by bench/voice.sh with the web's esbuild.
//   node sentences.mjs BUNDLED_SPEAKABLE.mjs < answer.md   prints a JSON list of sentences
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const { speakable, sentencesOf } = await import(pathToFileURL(process.argv[2]).href);
const markdown = readFileSync(0, 'utf8');
process.stdout.write(JSON.stringify(sentencesOf(speakable(markdown))));
