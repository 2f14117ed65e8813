// End to end: the real `skald serve` binary, a real Chromium, the built page.
//
//   SKALD_BIN=/path/to/skald npm run test:e2e
//
// A debug SKALD_BIN serves web/dist from disk (SKALD_DEV_WEB_DIR); a release one must
// embed the current web/dist. CHROMIUM overrides the browser (default /usr/bin/chromium).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const READY_LINE = /^skald listening on (http:\/\/127\.0\.0\.1:\d+) token=(\S+)$/;
const READY_TIMEOUT_MS = 30_000;
const SETTLED_STATES = /^(ok|error|no-token)$/;
// Chromium has worded these "Refused to …" and, lately, "… violates the following
// Content Security Policy directive …".
const CSP_VIOLATION = /Content Security Policy|Refused to|violates the following/i;

describe('the page served by skald serve', () => {
  /** @type {{ origin: string, token: string, child: import('node:child_process').ChildProcess, stderr: () => string }} */
  let server;
  /** @type {import('playwright-core').Browser} */
  let browser;
  /** @type {string} */
  let root;

  before(async () => {
    const bin = process.env.SKALD_BIN;
    if (!bin) {
      throw new Error(
        'SKALD_BIN is not set: point it at the skald binary to test, e.g. ' +
          'SKALD_BIN="$PWD/../target/debug/skald" npm run test:e2e',
      );
    }
    root = await mkdtemp(path.join(tmpdir(), 'skald-e2e-'));
    server = await startServer(bin, root);
    browser = await chromium.launch({
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
      ],
    });
  });

  after(async () => {
    await browser?.close();
    if (server) await stopServer(server.child);
    if (root) await rm(root, { recursive: true, force: true });
  });

  test('with the launch token it reports ok and the version, and the token leaves the address bar', async () => {
    const { page, consoleMessages, close } = await openPage(browser, `${server.origin}/#token=${server.token}`);
    try {
      const health = await settledHealth(page);
      const message = await messageText(page);
      assert.equal(health, 'ok', `health is "${health}" (${message}); server stderr:\n${server.stderr()}`);

      const version = (await page.locator('[data-testid=version]').textContent())?.trim() ?? '';
      assert.notEqual(version, '', 'the version is shown');

      const url = page.url();
      assert.ok(!url.includes(server.token), `the URL still holds the token: ${url}`);
      assert.ok(!url.includes('#token'), `the URL still holds the fragment: ${url}`);

      // A fresh instance: the setup screen.
      assert.equal(await page.locator('[data-testid=screen]').getAttribute('data-screen'), 'setup');
      assert.match((await page.locator('h1').textContent()) ?? '', /Skald/);
      assert.deepEqual(
        consoleMessages.filter((m) => CSP_VIOLATION.test(m)),
        [],
        'no Content-Security-Policy violations',
      );
      assert.deepEqual(
        consoleMessages.filter((m) => m.startsWith('error:')),
        [],
        'no errors in the console',
      );
    } finally {
      await close();
    }
  });

  test('without a token it says the page needs its launch token', async () => {
    const { page, consoleMessages, close } = await openPage(browser, `${server.origin}/`);
    try {
      assert.equal(await settledHealth(page), 'no-token');
      assert.match(await messageText(page), /needs its launch token/);
      assert.deepEqual(consoleMessages.filter((m) => CSP_VIOLATION.test(m)), []);
    } finally {
      await close();
    }
  });

  test('with a wrong token it shows the server refused', async () => {
    const { page, consoleMessages, close } = await openPage(browser, `${server.origin}/#token=not-the-token`);
    try {
      assert.equal(await settledHealth(page), 'error');
      assert.notEqual(await messageText(page), '', 'the error is explained');
      assert.deepEqual(consoleMessages.filter((m) => CSP_VIOLATION.test(m)), []);
    } finally {
      await close();
    }
  });

  test('the token is kept in memory only: not in storage, cookies or IndexedDB', async () => {
    const { page, context, close } = await openPage(browser, `${server.origin}/#token=${server.token}`);
    try {
      assert.equal(await settledHealth(page), 'ok');
      const stored = await page.evaluate(async () => ({
        local: JSON.stringify(Object.entries(localStorage)),
        session: JSON.stringify(Object.entries(sessionStorage)),
        cookie: document.cookie,
        databases: JSON.stringify(await indexedDB.databases()),
      }));
      for (const [where, text] of Object.entries(stored)) {
        assert.ok(!text.includes(server.token), `the token is in ${where}`);
      }
      // Also HttpOnly cookies, which document.cookie cannot see.
      const cookies = await context.cookies();
      assert.ok(!JSON.stringify(cookies).includes(server.token), 'the token is in a cookie');
    } finally {
      await close();
    }
  });

  // The desktop shell hands the token over with src-tauri/init.js, which runs on every
  // navigation: it must give the token to Skald's own loopback origin and nobody else.
  test('the desktop init script hands the token to the loopback origin, which takes it once', async () => {
    const { page, consoleMessages, close } = await openPage(browser, `${server.origin}/`, initScript(server));
    try {
      assert.equal(await settledHealth(page), 'ok', `server stderr:\n${server.stderr()}`);
      assert.equal(await page.evaluate(() => '__skaldLaunchToken' in window), false, 'the page took and deleted it');
      assert.deepEqual(consoleMessages.filter((m) => CSP_VIOLATION.test(m)), []);
    } finally {
      await close();
    }
  });

  test('the desktop init script gives another origin nothing', async () => {
    // Same server, other origin: localhost is not 127.0.0.1 to a browser.
    const other = server.origin.replace('127.0.0.1', 'localhost');
    const { page, close } = await openPage(browser, `${other}/`, initScript(server));
    try {
      assert.equal(await page.evaluate(() => '__skaldLaunchToken' in window), false);
      assert.equal(await settledHealth(page), 'no-token');
    } finally {
      await close();
    }
  });
});

/** src-tauri/init.js with this server's origin and token filled in, as the shell does. */
function initScript(server) {
  const template = readFileSync(new URL('../../../src-tauri/init.js', import.meta.url), 'utf8');
  return template
    .replaceAll('__SKALD_ORIGIN__', JSON.stringify(server.origin))
    .replaceAll('__SKALD_TOKEN__', JSON.stringify(server.token));
}

/**
 * Spawns `bin serve` with a fresh data dir and fresh HOME / XDG dirs under
 * `root`, and resolves once it prints its ready line.
 */
async function startServer(bin, root) {
  const dir = async (name) => {
    const p = path.join(root, name);
    await mkdir(p, { recursive: true, mode: 0o700 });
    return p;
  };
  const dataDir = await dir('data');
  const env = {
    ...process.env,
    HOME: await dir('home'),
    XDG_DATA_HOME: await dir('xdg-data'),
    XDG_CONFIG_HOME: await dir('xdg-config'),
    XDG_CACHE_HOME: await dir('xdg-cache'),
    XDG_RUNTIME_DIR: await dir('xdg-runtime'),
  };
  delete env.SKALD_DATA_DIR;

  env.SKALD_DEV_WEB_DIR = new URL('../../dist/', import.meta.url).pathname;
  const child = spawn(bin, ['serve', '--data-dir', dataDir, '--port', '0'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  child.stdout.setEncoding('utf8');

  const { origin, token } = await new Promise((resolve, reject) => {
    let buffered = '';
    const fail = (why) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${why}\n--- server stderr ---\n${stderr}\n--- server stdout ---\n${buffered}`));
    };
    const timer = setTimeout(
      () => fail(`${bin} printed no ready line within ${READY_TIMEOUT_MS / 1000} s`),
      READY_TIMEOUT_MS,
    );
    child.on('error', (error) => fail(`could not start ${bin}: ${error.message}`));
    child.on('exit', (code, signal) => fail(`${bin} exited early (code ${code}, signal ${signal})`));
    child.stdout.on('data', (chunk) => {
      buffered += chunk;
      for (const line of buffered.split('\n')) {
        const match = READY_LINE.exec(line.trim());
        if (match) {
          clearTimeout(timer);
          child.removeAllListeners('exit');
          child.removeAllListeners('error');
          resolve({ origin: match[1], token: match[2] });
          return;
        }
      }
    });
  });
  // Keep draining stdout so the server never blocks on a full pipe.
  child.stdout.resume();
  return { origin, token, child, stderr: () => stderr };
}

/** SIGTERM, then SIGKILL if the server has not exited within 10 s. */
async function stopServer(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** A fresh context and page, with every console message and page error collected. */
async function openPage(browser, url, initScript) {
  const context = await browser.newContext();
  if (initScript !== undefined) await context.addInitScript({ content: initScript });
  const page = await context.newPage();
  /** @type {string[]} */
  const consoleMessages = [];
  page.on('console', (message) => consoleMessages.push(`${message.type()}: ${message.text()}`));
  page.on('pageerror', (error) => consoleMessages.push(`error: uncaught ${error.message}`));
  await page.goto(url);
  return { page, context, consoleMessages, close: () => context.close() };
}

/** Waits until the connection check has settled and returns its state code. */
async function settledHealth(page) {
  const health = page.locator('[data-testid=health]');
  await page.waitForFunction(
    (pattern) => {
      const found = [];
      const walk = (root) => {
        for (const element of root.querySelectorAll('*')) {
          if (element.getAttribute('data-testid') === 'health') found.push(element.getAttribute('data-state'));
          if (element.shadowRoot) walk(element.shadowRoot);
        }
      };
      walk(document);
      return found.some((state) => new RegExp(pattern).test(state ?? ''));
    },
    SETTLED_STATES.source,
    { timeout: 15_000 },
  );
  return (await health.getAttribute('data-state'))?.trim();
}

/** The status line's explanation, or '' when there is none. */
async function messageText(page) {
  const message = page.locator('[data-testid=message]');
  return (await message.count()) === 0 ? '' : ((await message.textContent())?.trim() ?? '');
}
