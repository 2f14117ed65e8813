/**
 * Turns a failed call into a sentence for people. The server's messages are
 * already written for people (and never leak internals); they start in lower
 * case so they can be embedded, so the first letter is raised here. A lockout
 * after failed attempts is worded here, in the active language, from the
 * seconds the server asks to wait.
 */
import { ApiError } from '../api/client.js';
import type { MicrophoneProblem } from '../audio/recorder.js';
import { strings } from './en.js';
import { formatNumber } from './format.js';
import { plural } from './locale.js';

export function describeError(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.code === 'network') return strings.unreachable;
    if (error.code === 'aborted') return strings.cancelled;
    if (error.code === 'rate_limited' && error.retryAfter !== null) return waitMessage(error.retryAfter);
    return sentence(error.message);
  }
  return strings.unexpected;
}

/** "Too many failed attempts. Try again in {n} seconds.", in the right plural form. */
export function waitMessage(seconds: number): string {
  return plural(seconds, strings.rateLimited).replace('{n}', formatNumber(seconds));
}

/** Capital first letter, final full stop. */
export function sentence(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return strings.unexpected;
  const first = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?…]$/.test(first) ? first : `${first}.`;
}

/** Why the microphone could not be used, in words. */
export function microphoneText(problem: MicrophoneProblem): string {
  switch (problem) {
    case 'refused':
      return strings.micRefused;
    case 'missing':
      return strings.micMissing;
    case 'unsupported':
      return strings.micUnsupported;
    case 'failed':
      return strings.micFailed;
  }
}
