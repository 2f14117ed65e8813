// Lint settings for the web UI: `npm run lint` (test.sh runs it after the build).
//
// The TypeScript is linted with type information (typescript-eslint's
// recommendedTypeChecked), so a promise nobody awaits or a Promise handed to
// something that expects a plain callback is an error, not a silent bug. Lit's
// templates get eslint-plugin-lit's recommended checks. The browser tests (those
// beside the components too) are plain Node ES modules and get ESLint's own
// recommended rules.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import lit from 'eslint-plugin-lit';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/', 'node_modules/', 'test-output/'] },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked, lit.configs['flat/recommended']],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [js.configs.recommended],
    languageOptions: {
      globals: { ...globals.node },
    },
  },
  {
    // The functions these tests hand to page.evaluate() and waitForFunction() run in the page.
    files: ['tests/e2e/**/*.mjs', 'tests/mount.mjs', 'tests/fixtures.mjs', 'src/**/*.test.mjs'],
    languageOptions: {
      globals: { ...globals.browser },
    },
  },
);
