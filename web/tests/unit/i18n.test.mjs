// The page's languages: every translation has exactly the keys of English, keeps every
// placeholder, and gives a count's sentence the plural forms its language's rules
// (Intl.PluralRules) ask for; the language chosen follows the setting, else the browser;
// the lockout message reads right for 1 and for 2 in each language.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { loadModules } from './load.mjs';

const PLACEHOLDER = /\{[a-z]+\}/gi;

/** The placeholders of a text, sorted, each once. */
function placeholders(text) {
  return [...new Set(text.match(PLACEHOLDER) ?? [])].sort();
}

const isForms = (value) => typeof value === 'object' && value !== null;

/**
 * What is wrong with one language's table against English's: a missing or extra key, a
 * plain string where English has plural forms (or the reverse), a placeholder lost or
 * added, a plural category its rules use without a form, or a form for a category they
 * never use. `locale` names the language whose plural rules apply.
 */
function problems(english, other, locale) {
  const found = [];
  const categories = new Intl.PluralRules(locale).resolvedOptions().pluralCategories;
  for (const key of Object.keys(english)) if (!(key in other)) found.push(`${key}: missing`);
  for (const key of Object.keys(other)) if (!(key in english)) found.push(`${key}: not in English`);
  for (const [key, source] of Object.entries(english)) {
    const target = other[key];
    if (target === undefined) continue;
    const expected = placeholders(isForms(source) ? source.other : source);
    if (isForms(source) !== isForms(target)) {
      found.push(`${key}: ${isForms(source) ? 'needs plural forms' : 'must be a plain string'}`);
      continue;
    }
    const texts = isForms(target) ? Object.entries(target) : [['', target]];
    for (const [category, text] of texts) {
      const where = category === '' ? key : `${key}.${category}`;
      if (typeof text !== 'string' || text.trim() === '') found.push(`${where}: empty`);
      else if (placeholders(text).join() !== expected.join()) found.push(`${where}: placeholders ${placeholders(text)} instead of ${expected}`);
    }
    if (isForms(target)) {
      for (const category of categories) if (!(category in target)) found.push(`${key}: no "${category}" form for ${locale}`);
      for (const category of Object.keys(target)) if (!categories.includes(category)) found.push(`${key}: "${category}" is not a ${locale} plural category`);
    }
  }
  return found;
}

describe('the languages of the page', () => {
  let locale;
  let errors;
  let format;
  let en;
  let client;

  before(async () => {
    ({ locale, errors, format, en, client } = await loadModules({
      locale: 'i18n/locale.ts',
      errors: 'i18n/errors.ts',
      format: 'i18n/format.ts',
      en: 'i18n/en.ts',
      client: 'api/client.ts',
    }));
  });

  test('are English, French and Italian', () => {
    assert.deepEqual([...locale.LOCALES], ['en', 'fr', 'it']);
    assert.deepEqual(locale.LOCALE_NAMES, { en: 'English', fr: 'Français', it: 'Italiano' });
  });

  test('English gives each count its own plural forms, and only those', () => {
    assert.deepEqual(problems(locale.WORDS.en.strings, locale.WORDS.en.strings, 'en'), []);
  });

  for (const id of ['fr', 'it']) {
    test(`${id} has every string of English and no other, each with its placeholders and plural forms`, () => {
      assert.deepEqual(problems(locale.WORDS.en.strings, locale.WORDS[id].strings, id), []);
    });

    test(`${id} names every tool and words every audit entry English does`, () => {
      assert.deepEqual(problems(locale.WORDS.en.tools, locale.WORDS[id].tools, id), []);
      assert.deepEqual(problems(locale.WORDS.en.audit, locale.WORDS[id].audit, id), []);
    });
  }

  test('the check catches a missing key, a lost placeholder and a missing plural form', () => {
    const english = { a: 'A {name}', b: { one: '{n} b', other: '{n} bs' }, c: 'C' };
    assert.deepEqual(problems(english, { a: 'A', b: { one: '{n} b', other: '{n} bs' }, d: 'D' }, 'fr'), [
      'c: missing',
      'd: not in English',
      'a: placeholders  instead of {name}',
      'b: no "many" form for fr',
    ]);
    assert.deepEqual(problems(english, { a: 'A {name}', b: '{n} b', c: { other: 'C' } }, 'it'), [
      'b: needs plural forms',
      'c: must be a plain string',
    ]);
    assert.deepEqual(problems(english, { ...english, b: { one: '{n} b', few: '{n} b', other: '{count} bs' } }, 'en'), [
      'b.other: placeholders {count} instead of {n}',
      'b: "few" is not a en plural category',
    ]);
  });

  test('a person’s choice wins over the browser, and the browser over English', () => {
    assert.deepEqual(locale.resolveLocale('it', ['fr-FR', 'en']), { id: 'it', tag: 'it' });
    assert.deepEqual(locale.resolveLocale('system', ['de-DE', 'fr-CA', 'it']), { id: 'fr', tag: 'fr-CA' });
    assert.deepEqual(locale.resolveLocale('system', ['de-DE']), { id: 'en', tag: 'en' });
    assert.deepEqual(locale.resolveLocale('en', ['en-GB', 'fr']), { id: 'en', tag: 'en-GB' });
    assert.equal(locale.parseChoice('fr'), 'fr');
    assert.equal(locale.parseChoice('klingon'), 'system');
    assert.equal(locale.parseChoice(undefined), 'system');
  });

  test('the lockout reads right for 1 and for 2 seconds in every language', () => {
    const expected = {
      en: ['Too many failed attempts. Try again in 1 second.', 'Too many failed attempts. Try again in 2 seconds.'],
      fr: ['Trop de tentatives manquées. Réessaie dans 1 seconde.', 'Trop de tentatives manquées. Réessaie dans 2 secondes.'],
      it: ['Troppi tentativi non riusciti. Riprova tra 1 secondo.', 'Troppi tentativi non riusciti. Riprova tra 2 secondi.'],
    };
    try {
      for (const [id, [one, two]] of Object.entries(expected)) {
        locale.useLocale(locale.resolveLocale(id, []));
        assert.equal(errors.waitMessage(1), one, id);
        assert.equal(errors.waitMessage(2), two, id);
      }
    } finally {
      locale.useLocale(locale.resolveLocale('en', []));
    }
  });

  test('the login’s countdown reads right for 1 and for 2 seconds in every language', () => {
    const expected = {
      en: ['You can try again in 1 second; what you typed is kept.', 'You can try again in 2 seconds; what you typed is kept.'],
      fr: ['Tu pourras réessayer dans 1 seconde\u202f; ce que tu as tapé est gardé.', 'Tu pourras réessayer dans 2 secondes\u202f; ce que tu as tapé est gardé.'],
      it: ['Puoi riprovare tra 1 secondo; ciò che hai scritto resta.', 'Puoi riprovare tra 2 secondi; ciò che hai scritto resta.'],
    };
    const wait = (n) => locale.plural(n, en.strings.loginWait).replace('{n}', format.formatNumber(n));
    try {
      for (const [id, [one, two]] of Object.entries(expected)) {
        locale.useLocale(locale.resolveLocale(id, []));
        assert.deepEqual([wait(1), wait(2)], [one, two], id);
      }
    } finally {
      locale.useLocale(locale.resolveLocale('en', []));
    }
  });

  test('a refused login says how long to wait in the person’s language, from Retry-After', async () => {
    const refuse = async () =>
      new Response(JSON.stringify({ error: { code: 'rate_limited', message: 'too many failed attempts; try again in 1 seconds' } }), {
        status: 429,
        headers: { 'Content-Type': 'application/json', 'Retry-After': '1' },
      });
    const api = new client.ApiClient('launch', { baseUrl: 'http://127.0.0.1:9', fetch: refuse });
    const error = await api.login('Ada', 'wrong').then(
      () => assert.fail('the login was refused'),
      (e) => e,
    );
    assert.equal(error.retryAfter, 1);
    try {
      locale.useLocale(locale.resolveLocale('it', []));
      assert.equal(errors.describeError(error), 'Troppi tentativi non riusciti. Riprova tra 1 secondo.');
    } finally {
      locale.useLocale(locale.resolveLocale('en', []));
    }
    assert.equal(errors.describeError(error), 'Too many failed attempts. Try again in 1 second.');
  });

  test('plural rules follow the language: French says 0 in the singular, Italian and English do not', () => {
    const forms = { one: 'one', many: 'many', other: 'other' };
    try {
      const pick = (id, n) => {
        locale.useLocale(locale.resolveLocale(id, []));
        return locale.plural(n, forms);
      };
      assert.deepEqual([0, 1, 2, 1_000_000].map((n) => pick('fr', n)), ['one', 'one', 'other', 'many']);
      assert.deepEqual([0, 1, 2, 1_000_000].map((n) => pick('it', n)), ['other', 'one', 'other', 'many']);
      assert.deepEqual([0, 1, 2, 1_000_000].map((n) => pick('en', n)), ['other', 'one', 'other', 'other']);
    } finally {
      locale.useLocale(locale.resolveLocale('en', []));
    }
  });

  test('switching refills the tables the components read, and numbers follow', () => {
    const seen = [];
    const stop = locale.onLocaleChange((active) => seen.push(active.id));
    try {
      locale.useLocale(locale.resolveLocale('fr', []));
      assert.equal(en.strings.dataTitle, 'Mes données');
      assert.equal(en.toolLabel('web_fetch'), 'Lire une page web');
      assert.equal(format.formatNumber(1234.5, 1), '1\u202f234,5');
      locale.useLocale(locale.resolveLocale('it', []));
      assert.equal(en.strings.dataTitle, 'I miei dati');
      locale.useLocale(locale.resolveLocale('en', []));
      assert.equal(en.strings.dataTitle, 'My data');
      assert.equal(en.toolLabel('web_fetch'), 'Read a web page');
      assert.equal(format.formatNumber(1234.5, 1), '1,234.5');
      assert.deepEqual(seen, ['fr', 'it', 'en']);
    } finally {
      stop();
      locale.useLocale(locale.resolveLocale('en', []));
    }
  });
});
