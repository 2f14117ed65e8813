/**
 * The password strength floor as the page explains it while a person types. The rules
 * come from the same file the server reads (password-rules.json, read by
 * src/users/password.rs), so the meter never calls green what the server refuses; the
 * server stays the judge and its reason is shown as it is when it refuses. Pure.
 */
import rules from './password-rules.json';

/** Shortest password the server accepts, in characters. */
export const MIN_PASSWORD_CHARS = rules.min_chars;

export type PasswordVerdict =
  | { readonly ok: true }
  | { readonly ok: false; readonly why: 'short' | 'repetitive' | 'common' | 'contains-name'; readonly missing: number };

const COMMON = new Set(rules.common);

/** The server's order of checks: length, variety, the common list, the person's name. */
export function judgePassword(password: string, name: string): PasswordVerdict {
  const chars = [...password].length;
  if (chars < rules.min_chars) return { ok: false, why: 'short', missing: rules.min_chars - chars };
  const lower = password.toLowerCase();
  if (new Set([...lower]).size < rules.min_distinct) return { ok: false, why: 'repetitive', missing: 0 };
  const squashed = [...lower].filter((c) => /[\p{L}\p{N}]/u.test(c)).join('');
  if (COMMON.has(squashed)) return { ok: false, why: 'common', missing: 0 };
  const trimmed = name.trim().toLowerCase();
  if ([...trimmed].length >= rules.name_min_chars && lower.includes(trimmed)) {
    return { ok: false, why: 'contains-name', missing: 0 };
  }
  return { ok: true };
}
