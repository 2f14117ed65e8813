/**
 * The password strength floor as the page explains it while a person types.
 * It mirrors the server's rules (src/users/password.rs) so the hint appears
 * before a round trip; the server stays the judge and its reason is shown
 * as it is when it refuses. Pure.
 */

/** Shortest password the server accepts, in characters. */
export const MIN_PASSWORD_CHARS = 12;

export type PasswordVerdict =
  | { readonly ok: true }
  | { readonly ok: false; readonly why: 'short' | 'repetitive' | 'contains-name'; readonly missing: number };

export function judgePassword(password: string, name: string): PasswordVerdict {
  const chars = [...password].length;
  if (chars < MIN_PASSWORD_CHARS) return { ok: false, why: 'short', missing: MIN_PASSWORD_CHARS - chars };
  if (new Set([...password.toLowerCase()]).size < 5) return { ok: false, why: 'repetitive', missing: 0 };
  const trimmed = name.trim().toLowerCase();
  if ([...trimmed].length >= 3 && password.toLowerCase().includes(trimmed)) {
    return { ok: false, why: 'contains-name', missing: 0 };
  }
  return { ok: true };
}
