// Build settings for the UI that the Skald binary embeds and serves.
//
// The server sends a strict Content-Security-Policy (script-src 'self',
// style-src 'self', no 'unsafe-inline', no 'unsafe-eval'), so nothing may be
// inlined into index.html: every script and stylesheet must be its own file.
// The `strictCsp` plugin below fails the build when that slips.
import { defineConfig, type Plugin } from 'vite';

export default defineConfig({
  // Absolute URLs (/assets/…): the server always mounts the UI at its root,
  // and a page served for a deeper client route still finds its assets.
  base: '/',
  plugins: [strictCsp()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // The modulepreload polyfill is an inline <script>; CSP would refuse it.
    modulePreload: { polyfill: false },
    // Never turn assets into data: URLs or inline blobs.
    assetsInlineLimit: 0,
    sourcemap: false,
    rollupOptions: {
      output: {
        // pdf.js's worker is copied as a file (`?url`) and would keep its .mjs ending; as
        // .js the server serves it as JavaScript, which a module worker must be.
        assetFileNames: (asset) =>
          asset.names.some((name) => name.endsWith('.mjs')) ? 'assets/[name]-[hash].js' : 'assets/[name]-[hash][extname]',
      },
    },
  },
});

/** Fails the build if the output needs 'unsafe-inline' or 'unsafe-eval'. */
function strictCsp(): Plugin {
  const htmlRules: ReadonlyArray<readonly [RegExp, string]> = [
    [/<script\b(?![^>]*\bsrc=)[^>]*>/i, 'an inline <script>'],
    [/<style\b/i, 'an inline <style>'],
    [/\sstyle\s*=/i, 'a style="" attribute'],
    [/\son[a-z]+\s*=/i, 'an inline event handler (on…="")'],
    [/\b(?:href|src)\s*=\s*["']?\s*javascript:/i, 'a javascript: URL'],
  ];
  const scriptRules: ReadonlyArray<readonly [RegExp, string]> = [
    [/\beval\s*\(/, 'eval()'],
    [/\bnew\s+Function\s*\(/, 'new Function()'],
  ];
  return {
    name: 'skald-strict-csp',
    apply: 'build',
    // 'post': index.html joins the bundle in Vite's own generateBundle hook.
    generateBundle: {
      order: 'post',
      handler(_options, bundle) {
        for (const [fileName, output] of Object.entries(bundle)) {
          const [rules, text] =
            output.type === 'chunk'
              ? [scriptRules, output.code]
              : fileName.endsWith('.html')
                ? [htmlRules, String(output.source)]
                : [[], ''];
          for (const [pattern, what] of rules) {
            if (pattern.test(text)) {
              this.error(`${fileName} contains ${what}, which the server's Content-Security-Policy refuses.`);
            }
          }
        }
      },
    },
  };
}
