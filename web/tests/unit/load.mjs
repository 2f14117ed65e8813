// Loads a TypeScript module of src/ for a unit test: esbuild bundles it (types
// stripped, imports inlined) into a temporary ES module, which is imported.
// Only for modules that do not touch the DOM: the state/ reducers and rules.
import { build } from 'esbuild';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export async function loadModule(relative) {
  const entry = new URL(`../../src/${relative}`, import.meta.url).pathname;
  const result = await build({ entryPoints: [entry], bundle: true, format: 'esm', platform: 'neutral', write: false, logLevel: 'error' });
  const dir = await mkdtemp(path.join(tmpdir(), 'skald-unit-'));
  const file = path.join(dir, 'module.mjs');
  await writeFile(file, result.outputFiles[0].text);
  try {
    return await import(pathToFileURL(file).href);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
