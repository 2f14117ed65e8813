// Shared pieces of the browser tests: spawn `skald serve` (and the scripted model
// server) with throwaway directories, open pages in Chromium with every console
// message collected, and call the API the way a script would.
//
// Not a test file itself (node --test picks *.test.mjs only).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const READY_LINE = /^skald listening on (http:\/\/127\.0\.0\.1:\d+) token=(\S+)$/;
const MODEL_READY_LINE = /^scripted-model listening on (http:\/\/127\.0\.0\.1:\d+)$/;
const READY_TIMEOUT_MS = 30_000;
// Chromium has worded these "Refused to …" and, lately, "… violates the following
// Content Security Policy directive …".
export const CSP_VIOLATION = /Content Security Policy|Refused to|violates the following/i;

/** Where screenshots go: web/test-output/ (gitignored). */
export const OUTPUT_DIR = new URL('../../test-output/', import.meta.url).pathname;

export function requireBin() {
  const bin = process.env.SKALD_BIN;
  if (!bin) {
    throw new Error(
      'SKALD_BIN is not set: point it at the skald binary to test, e.g. ' +
        'SKALD_BIN="$PWD/../target/debug/skald" npm run test:e2e',
    );
  }
  return bin;
}

/**
 * The scripted model server binary: SCRIPTED_MODEL_BIN, else the first that exists
 * beside SKALD_BIN, in $CARGO_TARGET_DIR/debug, or in the default target directory
 * (~/.cache/skald/target/debug) where test.sh builds it.
 */
export function scriptedModelBin() {
  if (process.env.SCRIPTED_MODEL_BIN) return process.env.SCRIPTED_MODEL_BIN;
  const candidates = [
    path.join(path.dirname(requireBin()), 'scripted-model'),
    ...(process.env.CARGO_TARGET_DIR ? [path.join(process.env.CARGO_TARGET_DIR, 'debug', 'scripted-model')] : []),
    path.join(homedir(), '.cache', 'skald', 'target', 'debug', 'scripted-model'),
  ];
  const found = candidates.find((candidate) => existsSync(candidate));
  if (!found) {
    throw new Error(`no scripted-model binary (looked at ${candidates.join(', ')}): run cargo build -p scripted-model --bin scripted-model, or set SCRIPTED_MODEL_BIN`);
  }
  return found;
}

/** A fresh temporary root for one test file's processes. */
export async function makeRoot() {
  return mkdtemp(path.join(tmpdir(), 'skald-e2e-'));
}

export async function removeRoot(root) {
  if (root) await rm(root, { recursive: true, force: true });
}

/**
 * Spawns `bin serve` with a fresh data dir and fresh HOME / XDG dirs under
 * `root`, and resolves once it prints its ready line. Debug builds serve the
 * page from web/dist when SKALD_DEV_WEB_DIR points there, so the tests check
 * the page just built rather than the copy embedded at the last cargo build.
 */
export async function startServer(bin, root, { env: extraEnv = {}, dataDir: givenDataDir } = {}) {
  const dir = async (name) => {
    const p = path.join(root, name);
    await mkdir(p, { recursive: true, mode: 0o700 });
    return p;
  };
  const dataDir = givenDataDir ?? (await dir('data'));
  const env = {
    ...process.env,
    HOME: await dir('home'),
    XDG_DATA_HOME: await dir('xdg-data'),
    XDG_CONFIG_HOME: await dir('xdg-config'),
    XDG_CACHE_HOME: await dir('xdg-cache'),
    XDG_RUNTIME_DIR: await dir('xdg-runtime'),
    SKALD_INSECURE_FAST_KDF: '1',
    // Scripted replies are counted: no title request unless a test asks for one.
    SKALD_AUTO_TITLES: 'off',
    SKALD_DEV_WEB_DIR: new URL('../../dist/', import.meta.url).pathname,
    ...extraEnv,
  };
  delete env.SKALD_DATA_DIR;

  const proc = spawn(bin, ['serve', '--data-dir', dataDir, '--port', '0'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderr = collect(proc.stderr);
  const [origin, token] = await readyLine(proc, READY_LINE, `${bin}`, stderr);
  return { origin, token, proc, stderr: () => stderr.text };
}

/** Spawns the scripted model server; resolves with its URL and a way to queue replies. */
export async function startScriptedModel() {
  const bin = scriptedModelBin();
  const proc = spawn(bin, ['--host', '127.0.0.1', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr = collect(proc.stderr);
  const [url] = await readyLine(proc, MODEL_READY_LINE, bin, stderr);
  return {
    url,
    proc,
    /** Queues replies (one object or an array) behind those already queued. */
    async push(replies) {
      const response = await fetch(`${url}/_scripted/replies`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(replies),
      });
      if (!response.ok) throw new Error(`queueing replies: ${response.status} ${await response.text()}`);
    },
    /** Every chat request it received so far, oldest first: `{ path, body, raw, … }`. */
    async requests() {
      const response = await fetch(`${url}/_scripted/requests`);
      if (!response.ok) throw new Error(`reading requests: ${response.status}`);
      return response.json();
    },
  };
}

function collect(stream) {
  const sink = { text: '' };
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    sink.text += chunk;
  });
  return sink;
}

function readyLine(proc, pattern, what, stderr) {
  proc.stdout.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    let buffered = '';
    const fail = (why) => {
      clearTimeout(timer);
      proc.kill('SIGKILL');
      reject(new Error(`${why}\n--- stderr ---\n${stderr.text}\n--- stdout ---\n${buffered}`));
    };
    const timer = setTimeout(() => fail(`${what} printed no ready line within ${READY_TIMEOUT_MS / 1000} s`), READY_TIMEOUT_MS);
    proc.on('error', (error) => fail(`could not start ${what}: ${error.message}`));
    proc.on('exit', (code, signal) => fail(`${what} exited early (code ${code}, signal ${signal})`));
    proc.stdout.on('data', (chunk) => {
      buffered += chunk;
      for (const line of buffered.split('\n')) {
        const match = pattern.exec(line.trim());
        if (match) {
          clearTimeout(timer);
          proc.removeAllListeners('exit');
          proc.removeAllListeners('error');
          // Keep draining stdout so the process never blocks on a full pipe.
          proc.stdout.resume();
          resolve(match.slice(1));
          return;
        }
      }
    });
  });
}

/**
 * What a test file runs against: `skald serve` on a fresh root (with `env` added to its
 * environment), the scripted model server (unless `model` is false) and a browser. With
 * `detected`, the model server is started first and Skald finds it as the llama.cpp
 * server on its usual port would be found (for setup's "on this computer").
 * Whatever started is stopped again if a later part fails to start.
 */
export async function startStack({ model = true, env = {}, detected = false, browserArgs = [] } = {}) {
  const stack = { root: await makeRoot() };
  try {
    if (model || detected) stack.model = await startScriptedModel();
    const detect = detected ? { SKALD_TEST_DETECT_PORTS: `llamacpp=${new URL(stack.model.url).port}` } : {};
    stack.server = await startServer(requireBin(), stack.root, { env: { ...env, ...detect } });
    stack.browser = await launchBrowser({ args: browserArgs });
    return stack;
  } catch (error) {
    await stopStack(stack);
    throw error;
  }
}

/** Stops what startStack started, whatever part of it did start. */
export async function stopStack({ root, server, model, browser } = {}) {
  await browser?.close();
  if (server) await stopProcess(server.proc);
  if (model) await stopProcess(model.proc);
  await removeRoot(root);
}

/**
 * Sets the instance up through the API: `admin` as its first administrator, the scripted
 * model server as its provider, then each `[person, role]` added and enrolled. Returns
 * the setup answer and each enrolment answer, in order.
 */
export async function seedInstance(server, model, admin, members = []) {
  const setup = await api(server.origin, server.token, 'POST', '/api/setup', admin);
  await api(server.origin, setup.token, 'POST', '/api/providers', { name: 'scripted', kind: 'openai', base_url: `${model.url}/v1` });
  const enrolled = [];
  for (const [person, role] of members) {
    const added = await api(server.origin, setup.token, 'POST', '/api/users', { name: person.name, role });
    enrolled.push(
      await api(server.origin, server.token, 'POST', '/api/enrol', {
        name: person.name,
        enrolment_code: added.enrolment_code,
        password: person.password,
      }),
    );
  }
  return { setup, enrolled };
}

/** Picks `person` on the login picker, types their password and waits for their workspace. */
export async function logIn(page, person, timeout) {
  await page.locator(`[data-testid=person][data-name=${person.name}]`).click();
  await page.locator('#password').fill(person.password);
  await page.keyboard.press('Enter');
  await page.locator('[data-screen=workspace]').waitFor({ timeout });
}

/**
 * Opens a `<details>` by its summary and waits for `content` to show. One click: the page
 * must not draw the part anew (closed) once it is on screen, and a second click would
 * close what the first opened.
 */
export async function openDisclosure(summary, content) {
  await summary.click();
  await content.waitFor({ timeout: 10_000 });
}

/** SIGTERM, then SIGKILL if the process has not exited within 10 s. */
export async function stopProcess(proc) {
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Chromium, headless; `args` added to its command line (a fake microphone, say). */
export async function launchBrowser({ args = [] } = {}) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--headless',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...args,
    ],
  });
}

/**
 * A fresh context and page, with every console message and page error collected. A
 * `deviceScaleFactor` of 2 over half the window is how 200% zoom looks.
 */
export async function openPage(browser, url, { initScript, colorScheme, viewport = { width: 1280, height: 800 }, deviceScaleFactor } = {}) {
  const context = await browser.newContext({
    viewport,
    ...(deviceScaleFactor ? { deviceScaleFactor } : {}),
    ...(colorScheme ? { colorScheme } : {}),
  });
  if (initScript !== undefined) await context.addInitScript({ content: initScript });
  const page = await context.newPage();
  /** @type {string[]} */
  const consoleMessages = [];
  /** Answers with an error status, as `METHOD /path STATUS`. */
  const failedResponses = [];
  page.on('console', (message) => consoleMessages.push(`${message.type()}: ${message.text()}`));
  page.on('pageerror', (error) => consoleMessages.push(`error: uncaught ${error.message}`));
  page.on('response', (response) => {
    if (response.status() >= 400) {
      failedResponses.push(`${response.request().method()} ${new URL(response.url()).pathname} ${response.status()}`);
    }
  });
  await page.goto(url);
  return { page, context, consoleMessages, failedResponses, close: () => context.close() };
}

/** Calls the API as a script would: JSON in, JSON out, throws on an error status. */
export async function api(origin, token, method, route, body) {
  const response = await fetch(`${origin}${route}`, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${text}`);
  return text === '' ? undefined : JSON.parse(text);
}

/** Saves a screenshot of the window as OUTPUT_DIR/<name>.png (`name` may hold a folder) and returns its path. */
export async function screenshot(page, name) {
  const file = path.join(OUTPUT_DIR, `${name}.png`);
  await mkdir(path.dirname(file), { recursive: true });
  await page.screenshot({ path: file });
  return file;
}

/**
 * Console messages that are errors, CSP violations or uncaught exceptions.
 * Chromium also logs every HTTP error answer ("Failed to load resource: the
 * server responded with a status of 401"); those are left out here, and the
 * tests check the answers themselves (`failedResponses`) against the ones they
 * expect, such as the 401 of a wrong password.
 */
export function problems(consoleMessages) {
  return consoleMessages.filter(
    (m) => (m.startsWith('error:') || CSP_VIOLATION.test(m)) && !/Failed to load resource: the server responded with a status of \d+/.test(m),
  );
}

// ---- accessibility and layout checks ------------------------------------------

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Runs axe-core (WCAG 2.1 A and AA, and its best practices) on the page as it is,
 * shadow roots included, and returns every violation, whatever its impact, each as
 * `id (impact): help (targets)`. axe goes in through the DevTools protocol, not a
 * <script> tag, which the page's Content-Security-Policy would refuse.
 */
export async function axeViolations(page) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const result = await window.axe.run(document, {
      resultTypes: ['violations'],
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
    });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.slice(0, 4).map((n) => JSON.stringify(n.target)),
    }));
  });
  return violations.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.targets.join(', ')}`);
}

const nextFrame = (page) => page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve()))));

/**
 * axeViolations in the light and then the dark theme, each prefixed with its theme. Both
 * the system's scheme (emulated) and the page's own `data-theme` on <html> are set to
 * the theme, so a person's in-app choice cannot hide one of them; both are put back
 * afterwards. With `screenshot`, each theme is also saved as `<screenshot>-<theme>.png`.
 */
export async function axeViolationsInThemes(page, { screenshot: name } = {}) {
  const before = await page.evaluate(() => ({
    dark: matchMedia('(prefers-color-scheme: dark)').matches,
    theme: document.documentElement.dataset.theme,
  }));
  const found = [];
  try {
    for (const theme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: theme });
      await nextFrame(page);
      await page.evaluate((t) => {
        document.documentElement.dataset.theme = t;
      }, theme);
      await nextFrame(page);
      for (const v of await axeViolations(page)) found.push(`${theme}: ${v}`);
      if (name) await screenshot(page, `${name}-${theme}`);
    }
  } finally {
    await page.emulateMedia({ colorScheme: before.dark ? 'dark' : 'light' });
    await nextFrame(page);
    await page.evaluate((t) => {
      if (t === undefined) delete document.documentElement.dataset.theme;
      else document.documentElement.dataset.theme = t;
    }, before.theme);
  }
  return found;
}

/**
 * Elements, through every shadow root, that scroll sideways although they are not
 * meant to (code, tables and text fields may): content cut off in a narrow window.
 * Also the page itself being wider than the window.
 */
export async function sidewaysOverflow(page) {
  return page.evaluate(() => {
    const found = [];
    if (document.documentElement.scrollWidth > window.innerWidth + 1) {
      found.push(`the page is ${document.documentElement.scrollWidth}px wide in a ${window.innerWidth}px window`);
    }
    const allowed = (el) => el.matches('pre, textarea, input, select, table, .table-wrap, .args, code');
    const walk = (root) => {
      for (const el of root.querySelectorAll('*')) {
        if (el.shadowRoot) walk(el.shadowRoot);
        if (allowed(el) || el.clientWidth === 0) continue;
        const style = getComputedStyle(el);
        if (style.visibility === 'hidden' || style.display === 'none') continue;
        if (el.scrollWidth > el.clientWidth + 1 && (style.overflowX === 'auto' || style.overflowX === 'scroll')) {
          found.push(`${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}.${[...el.classList].join('.')} scrolls sideways (${el.scrollWidth}px in ${el.clientWidth}px)`);
        }
      }
    };
    walk(document);
    return found;
  });
}
