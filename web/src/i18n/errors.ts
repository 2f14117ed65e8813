/**
 * Turns a failed call into a sentence for people. The server's messages are
 * already written for people (and never leak internals); they start in lower
 * case so they can be embedded, so the first letter is raised here.
 */
import { ApiError } from '../api/client.js';
import { strings } from './en.js';

export function describeError(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.code === 'network') return strings.unreachable;
    if (error.code === 'aborted') return strings.cancelled;
    return sentence(error.message);
  }
  return strings.unexpected;
}

/** Capital first letter, final full stop. */
export function sentence(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return strings.unexpected;
  const first = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?…]$/.test(first) ? first : `${first}.`;
}
