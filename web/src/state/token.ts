/**
 * The launch token: taken once from the URL fragment at startup.
 *
 * `skald serve` and the desktop shell open `http://127.0.0.1:PORT/#token=T`.
 * A fragment never reaches the server, so the token does not land in any
 * request line or log. This module reads it, then rewrites the address bar
 * without it so it is not left in history, bookmarks or screen shares.
 *
 * Never: writes the token to localStorage, sessionStorage, cookies,
 * IndexedDB or the URL. It lives only in memory, for as long as the page.
 */

/** What remains of a fragment once the token is taken out of it. */
export interface SplitFragment {
  /** The token, or `null` when the fragment holds none (or an empty one). */
  readonly token: string | null;
  /** The fragment without the `token` parameter, `''` or starting with `#`. */
  readonly rest: string;
  /** Whether the fragment mentioned `token` at all, even empty. */
  readonly hadToken: boolean;
}

/**
 * Splits a `location.hash` such as `#token=abc` into the token and the rest.
 * Pure: reads nothing and changes nothing.
 */
export function splitLaunchFragment(hash: string): SplitFragment {
  const body = hash.startsWith('#') ? hash.slice(1) : hash;
  // Split by hand rather than with URLSearchParams, which would turn a `+`
  // in the token into a space.
  const parts = body === '' ? [] : body.split('&');
  const index = parts.findIndex((part) => part === 'token' || part.startsWith('token='));
  if (index === -1) {
    return { token: null, rest: hash, hadToken: false };
  }
  const raw = (parts[index] ?? '').slice('token='.length);
  const token = safeDecode(raw).trim();
  const rest = parts.filter((_, i) => i !== index).join('&');
  return { token: token === '' ? null : token, rest: rest === '' ? '' : `#${rest}`, hadToken: true };
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    // A malformed escape is not a token we could have printed; use it as is
    // and let the server refuse it.
    return value;
  }
}

/**
 * Takes the launch token out of the current URL and out of the address bar.
 *
 * Call once, before anything else reads the location. Returns the token, or
 * `null` when the page was opened without one.
 */
export function takeLaunchToken(
  location: Location = window.location,
  history: History = window.history,
): string | null {
  const handed = takeHandedToken();
  const { token, rest, hadToken } = splitLaunchFragment(location.hash);
  if (hadToken) {
    // replaceState, not assignment to location.hash: it leaves no history
    // entry that still carries the token and does not reload the page.
    history.replaceState(history.state, '', `${location.pathname}${location.search}${rest}`);
  }
  return handed ?? token;
}

/** Where the desktop shell's initialization script leaves the token. */
interface HandedToken {
  __skaldLaunchToken?: unknown;
}

/**
 * The token the desktop shell handed over in memory (its initialization
 * script sets it only on Skald's own origin), taken once: the property is
 * deleted so no later script finds it.
 */
export function takeHandedToken(scope: HandedToken = window as unknown as HandedToken): string | null {
  const value = scope.__skaldLaunchToken;
  delete scope.__skaldLaunchToken;
  return typeof value === 'string' && value !== '' ? value : null;
}
