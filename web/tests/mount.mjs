// Mounts the page's own modules in Chromium for the tests that sit beside the components
// and state they test (src/**/*.test.mjs). esbuild bundles the TypeScript sources a test
// names — the real elements, not copies — into one script, the way tests/unit/load.mjs
// bundles the pure modules for Node. A page on a made-up origin loads it: playwright's
// routing answers that origin, so no server runs, and a test that needs the API answers
// its routes itself. The page is served under the server's Content-Security-Policy, so a
// component that needs inline code fails here as it would in the app.
//
// Not a test file itself (node --test picks *.test.mjs only).
import { build } from 'esbuild';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, afterEach, before, beforeEach } from 'node:test';

import { launchBrowser, problems } from './e2e/harness.mjs';

/** The page's origin; nothing listens there, the routing answers it. */
export const ORIGIN = 'http://skald.test';
/** The live socket's address on that origin. */
export const LIVE_SOCKET = 'ws://skald.test/api/ws';

const SRC = new URL('../src/', import.meta.url);

// The server's policy (src/http/boundary.rs), with this origin in place of the loopback port.
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
  `connect-src 'self' ${LIVE_SOCKET}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'`;

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>component test</title>
    <link rel="stylesheet" href="/global.css">
    <script type="module" src="/modules.js"></script>
  </head>
  <body></body>
</html>`;

/**
 * Bundles `modules` (paths under src/, e.g. `components/skald-composer/skald-composer.ts`)
 * into one browser script that defines their elements and puts each module's exports on
 * `window.skald[path]`, for a test to build what the elements are given (a login, a client).
 * A file imported as Vite's `?url` (pdf.js's worker) is served from the page's origin,
 * as the built page serves it: `assets`, if given, gathers each address and its file.
 */
export async function bundleModules(modules, assets = new Map()) {
  const imports = modules.map((module, i) => `import * as m${i} from ${JSON.stringify(new URL(module, SRC).pathname)};`);
  const exported = modules.map((module, i) => `${JSON.stringify(module)}: m${i}`);
  const result = await build({
    stdin: {
      contents: `${imports.join('\n')}\nwindow.skald = { ${exported.join(', ')} };\n`,
      resolveDir: SRC.pathname,
      loader: 'js',
    },
    // The elements' decorators and fields compile as tsc and Vite compile them.
    tsconfig: new URL('../tsconfig.json', import.meta.url).pathname,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'error',
    plugins: [assetUrls(assets)],
  });
  return result.outputFiles[0].text;
}

/** Vite's `import url from 'file?url'`: the module is the file's address under /assets/, and `assets` maps it to the file. */
function assetUrls(assets) {
  return {
    name: 'asset-urls',
    setup(build) {
      build.onResolve({ filter: /\?url$/ }, async (args) => {
        const resolved = await build.resolve(args.path.slice(0, -'?url'.length), { kind: args.kind, resolveDir: args.resolveDir });
        return resolved.errors.length > 0 ? { errors: resolved.errors } : { path: resolved.path, namespace: 'asset-url' };
      });
      build.onLoad({ filter: /.*/, namespace: 'asset-url' }, (args) => {
        // As vite.config.ts names it: JavaScript ends in .js, whatever it was called.
        const address = `/assets/${path.basename(args.path).replace(/\.mjs$/, '.js')}`;
        assets.set(address, args.path);
        return { contents: `export default ${JSON.stringify(address)};`, loader: 'js' };
      });
    },
  };
}

/**
 * One browser for a test file, and a fresh page for each test on it (see `open`).
 * `modules` are bundled once, as `bundleModules` does.
 */
export async function startBrowser(modules) {
  const assets = new Map();
  const [script, css] = await Promise.all([bundleModules(modules, assets), readFile(new URL('styles/global.css', SRC), 'utf8')]);
  const browser = await launchBrowser();
  return {
    browser,
    /**
     * A new page with the modules loaded and nothing mounted yet. `api(route, request)`
     * answers `/api/...` requests (playwright's Route and Request); without it they fail.
     */
    async open({ api } = {}) {
      const context = await browser.newContext({ viewport: { width: 1024, height: 768 } });
      /** @type {string[]} */
      const consoleMessages = [];
      await context.route(`${ORIGIN}/**`, async (route, request) => {
        const { pathname } = new URL(request.url());
        if (pathname.startsWith('/api/')) {
          if (api) return api(route, request);
          return route.fulfill({ status: 500, contentType: 'application/json', body: '{"error":{"code":"unexpected","message":"this test answers no API"}}' });
        }
        const files = {
          '/': ['text/html', PAGE],
          '/modules.js': ['text/javascript', script],
          '/global.css': ['text/css', css],
        };
        if (assets.has(pathname)) {
          const body = await readFile(assets.get(pathname));
          return route.fulfill({ status: 200, contentType: 'text/javascript', headers: { 'Content-Security-Policy': CSP }, body });
        }
        const file = files[pathname];
        if (!file) return route.fulfill({ status: 404, body: '' });
        return route.fulfill({ status: 200, contentType: file[0], headers: { 'Content-Security-Policy': CSP }, body: file[1] });
      });
      const page = await context.newPage();
      page.on('console', (message) => consoleMessages.push(`${message.type()}: ${message.text()}`));
      page.on('pageerror', (error) => consoleMessages.push(`error: uncaught ${error.message}`));
      await page.goto(`${ORIGIN}/`);
      await page.waitForFunction(() => window.skald !== undefined);
      return {
        page,
        context,
        /** Errors, CSP violations and uncaught exceptions the page logged so far. */
        problems: () => problems(consoleMessages),
        close: () => context.close(),
      };
    },
    close: () => browser.close(),
  };
}

/**
 * Gives the suite it is called in (a `describe`) one browser with `modules` loaded, and
 * each of its tests a fresh page that must log no error. Returns `page` and `context`,
 * each standing for the one of the test running, so a suite can name them once.
 * `options()`, if given, is called before each test for what `open` takes (its `api`).
 */
export function componentFixture(modules, options = () => ({})) {
  let browser;
  let view;
  before(async () => {
    browser = await startBrowser(modules);
  });
  after(() => browser?.close());
  beforeEach(async () => {
    view = await browser.open(options());
  });
  afterEach(async () => {
    assert.deepEqual(view.problems(), [], 'the page logged no error');
    await view.close();
  });
  return { page: current(() => view.page), context: current(() => view.context) };
}

/** An object that forwards every property to what `now()` returns at the time of use. */
function current(now) {
  return new Proxy(
    {},
    {
      get(_, key) {
        const target = now();
        const value = target[key];
        return typeof value === 'function' ? value.bind(target) : value;
      },
    },
  );
}

/**
 * Puts `html` in the page's body and waits until every element in it has rendered.
 * `properties` are then set on the first element (what the element using it hands
 * down with `.prop=${…}`), and it renders again before this returns.
 */
export async function mount(page, html, properties = {}) {
  await page.evaluate(
    async ({ html, properties }) => {
      document.body.innerHTML = html;
      const element = document.body.querySelector('*');
      Object.assign(element, properties);
      await Promise.all([...document.body.querySelectorAll('*')].map((el) => el.updateComplete));
    },
    { html, properties },
  );
}

/** Sets properties on the element `selector` finds and waits for it to render. */
export async function setProperties(page, selector, properties) {
  await page.evaluate(
    async ({ selector, properties }) => {
      const element = document.querySelector(selector);
      Object.assign(element, properties);
      await element.updateComplete;
    },
    { selector, properties },
  );
}

/**
 * Starts recording the events `types` that reach the document, each as its type and the
 * fields the event carries (what the element listening reads off it). `emitted(page)` returns them.
 */
export async function recordEvents(page, types) {
  await page.evaluate((types) => {
    window.emitted = [];
    for (const type of types) {
      document.addEventListener(type, (event) => {
        // An event's own fields are what its class carries; `isTrusted` is the browser's.
        const fields = { ...event };
        delete fields.isTrusted;
        window.emitted.push({ type: event.type, ...JSON.parse(JSON.stringify(fields)) });
      });
    }
  }, types);
}

/** The events recorded since `recordEvents`, oldest first. */
export function emitted(page) {
  return page.evaluate(() => window.emitted);
}
