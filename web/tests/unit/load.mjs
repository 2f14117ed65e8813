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
  return importBuilt(await build({ entryPoints: [entry], bundle: true, format: 'esm', platform: 'neutral', write: false, logLevel: 'error' }));
}

/**
 * Loads several modules of src/ into one bundle, so they share their module state
 * (the active locale, say): `{ name: 'path/in/src.ts' }` gives `{ name: exports }`.
 */
export async function loadModules(modules) {
  const src = new URL('../../src/', import.meta.url).pathname;
  const contents = Object.entries(modules)
    .map(([name, relative]) => `export * as ${name} from ${JSON.stringify(`./${relative}`)};`)
    .join('\n');
  return importBuilt(
    await build({ stdin: { contents, resolveDir: src, loader: 'js' }, bundle: true, format: 'esm', platform: 'neutral', write: false, logLevel: 'error' }),
  );
}

async function importBuilt(result) {
  const dir = await mkdtemp(path.join(tmpdir(), 'skald-unit-'));
  const file = path.join(dir, 'module.mjs');
  await writeFile(file, result.outputFiles[0].text);
  try {
    return await import(pathToFileURL(file).href);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
