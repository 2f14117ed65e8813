/**
 * Why a reply failed, as a person reads it: what happened in a sentence, what they can do
 * next — an administrator is sent to the page that fixes it, anyone else is told whom to
 * ask, by name — and the server's own words kept as the detail. Pure.
 */
import type { TurnFailure } from '../api/types.js';
import { strings } from './en.js';
import { sentence } from './errors.js';

export interface Explained {
  readonly what: string;
  readonly next: string;
  /** What the server said, for whoever wants the detail (or to pass it on). */
  readonly detail: string;
}

/** Who reads it: whether they manage Skald, and who does. */
export interface Reader {
  readonly manages: boolean;
  readonly administrators: readonly string[];
}

/** Failures of the model or its service, fixed on the Models page: read when shown, in the active language. */
const MODEL_TROUBLE: Readonly<Record<string, () => string>> = {
  provider_unavailable: () => strings.failUnreachable,
  provider_stalled: () => strings.failStalled,
  provider_protocol: () => strings.failUnreadable,
  provider_auth: () => strings.failKey,
  provider_rejected: () => strings.failRejected,
  local_model: () => strings.failLocal,
  local_model_crashed: () => strings.failLocalCrashed,
};

export function explainTurnError(error: TurnFailure | null, reader: Reader): Explained {
  const detail = error?.message.trim() ?? '';
  const trouble = error ? MODEL_TROUBLE[error.code] : undefined;
  if (trouble === undefined) {
    // The server's words are already the sentence (a rate limit, the privacy tier, a cap).
    return { what: detail === '' ? strings.turnFailed : sentence(detail), next: '', detail: '' };
  }
  return { what: trouble(), next: nextStep(reader), detail };
}

function nextStep(reader: Reader): string {
  if (reader.manages) return strings.failNextAdmin;
  const names = reader.administrators;
  if (names.length === 0) return strings.failNextLater;
  return strings.failNextAsk.replace('{names}', joinNames(names));
}

/** Names as a sentence lists them: "Ada", "Ada or Bo", "Ada, Bo or Cy". */
export function joinNames(names: readonly string[]): string {
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} ${strings.or} ${names.at(-1) ?? ''}`;
}
