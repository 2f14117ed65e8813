/**
 * Which language the page speaks: the choice (a person's setting, else the
 * browser's languages), the switch, and the plural rules and formatting
 * locale that go with it.
 *
 * Owns: the active locale, refilling the string tables of en.ts when it
 * changes, and telling whoever listens (the LocaleController re-renders the
 * page). Never: touches the DOM or the server; the setting is read and saved
 * by the login and the My data page.
 */
import { english, useWords, type PluralForms, type Words } from './en.js';
import { french } from './fr.js';
import { italian } from './it.js';

/** The languages the page is written in. */
export const LOCALES = ['en', 'fr', 'it'] as const;
export type LocaleId = (typeof LOCALES)[number];

/** Each language by its own name, as a language menu shows it. */
export const LOCALE_NAMES: Readonly<Record<LocaleId, string>> = { en: 'English', fr: 'Français', it: 'Italiano' };

/** The words of each language. */
export const WORDS: Readonly<Record<LocaleId, Words>> = { en: english, fr: french, it: italian };

/** The key of the person's setting (`GET/PUT /api/me/settings/{key}`) that holds their choice. */
export const LANGUAGE_SETTING = 'language';

/** A person's choice: a language, or `system` to follow the browser. */
export type LanguageChoice = LocaleId | 'system';

/** The language in use and the tag `Intl` and `lang` get (`fr-CA` when the browser says so). */
export interface ActiveLocale {
  readonly id: LocaleId;
  readonly tag: string;
}

/** Reads a stored setting; anything unknown (or nothing) means "follow the browser". */
export function parseChoice(value: string | undefined | null): LanguageChoice {
  return (LOCALES as readonly string[]).includes(value ?? '') ? (value as LocaleId) : 'system';
}

/**
 * The locale for a choice, given the browser's languages in order of
 * preference (`navigator.languages`): the chosen language, or the first of the
 * browser's the page is written in, else English. The tag keeps the browser's
 * region when it names the same language, so dates read as the person is used to.
 */
export function resolveLocale(choice: LanguageChoice, browser: readonly string[]): ActiveLocale {
  const base = (tag: string): string => tag.toLowerCase().split('-')[0] ?? '';
  const id =
    choice !== 'system' ? choice : ((browser.map(base).find((b) => (LOCALES as readonly string[]).includes(b)) as LocaleId | undefined) ?? 'en');
  const tag = browser.find((t) => base(t) === id && isValidTag(t)) ?? id;
  return { id, tag };
}

function isValidTag(tag: string): boolean {
  try {
    return Intl.getCanonicalLocales(tag).length === 1;
  } catch {
    return false;
  }
}

let active: ActiveLocale = { id: 'en', tag: 'en' };
let rules = new Intl.PluralRules('en');
const listeners = new Set<(locale: ActiveLocale) => void>();

export function activeLocale(): ActiveLocale {
  return active;
}

/** Makes `locale` the page's language: every table refilled, every listener told. */
export function useLocale(locale: ActiveLocale): void {
  if (locale.id === active.id && locale.tag === active.tag) return;
  active = locale;
  rules = new Intl.PluralRules(locale.tag);
  useWords(WORDS[locale.id]);
  for (const listener of listeners) listener(locale);
}

/** Calls `listener` after each switch; returns the call that stops it. */
export function onLocaleChange(listener: (locale: ActiveLocale) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * The form of a count's sentence the active language uses for `n`, by its
 * plural rules (`one` for 0 and 1 in French, for 1 alone in English and
 * Italian, `many` for a million in French and Italian); `other` when the
 * language's form is missing. The caller fills in the placeholders.
 */
export function plural(n: number, forms: PluralForms): string {
  return forms[rules.select(n)] ?? forms.other;
}
