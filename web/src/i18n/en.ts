/**
 * Every string the UI shows, in English.
 *
 * Components read text from here and never hard-code it, so a translation is
 * one more file of the same shape. Placeholders are written `{name}` and
 * filled by the component, so a translation may move them.
 *
 * Not here: the machine-readable state codes (`ok`, `error`, `no-token`, …)
 * that tests and scripts read through `data-testid` hooks; they never change
 * with the language.
 */
export const en = {
  productName: 'Skald',
  tagline: 'Your private assistant',
  statusLabel: 'Status',
  checking: 'Checking the connection…',
  connected: 'Connected.',
  versionLabel: 'Version',
  /** `{command}` is replaced by the `skald serve` command, set as code. */
  noToken:
    'Open Skald from the app or from the link {command} printed — this page needs its launch token.',
  noTokenCommand: 'skald serve',
  unreachable: 'Skald is not answering. Is it still running?',
  /** `{message}` is the server's own explanation. */
  serverError: 'Skald reported a problem: {message}',
} as const;

/** The shape every translation must have. */
export type Strings = { readonly [K in keyof typeof en]: string };

/** The strings in use. One language for now. */
export const strings: Strings = en;
