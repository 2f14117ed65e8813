/**
 * A picture a tool call made, as the conversation shows it: which document a finished
 * `image_generate` call kept, read from the result the server writes (src/agent/tools/
 * image_generate.rs), which ends on the link to it:
 *
 *     Made a picture with {provider}/{model} and kept it among the person's documents as
 *     {id} ("{name}"); it shows in the conversation. Link to it as [{name}](#/files/{id}).
 *
 * and what it was made from, for its alt text; and the media type its bytes are shown
 * under. Pure: no calls, no DOM.
 */
import { ISSUED_DOCUMENT_ID } from './route.js';
import type { ToolItem } from './transcript.js';

/** The document a call kept its picture as, and the description it was made from. */
export interface MadePicture {
  readonly document: string;
  /** The description as the call gave it, its line breaks as spaces; `''` when it cannot be read. */
  readonly prompt: string;
}

/**
 * The link that ends the result: the document's id exactly as the server issues one, on
 * the Files page, and nothing after it but the full stop. A name holding something like a
 * link comes before it and is never taken for one.
 */
const LINK_AT_THE_END = new RegExp(`\\]\\(#/files/(${ISSUED_DOCUMENT_ID.source})\\)\\.$`);

/** The media types a picture is shown under: the four a document's kind can name (state/documents.ts). */
const SHOWN_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif']);

/**
 * The picture `item` made: only a call of `image_generate` that finished well and whose
 * result ends on the link to a document; `null` for anything else (running, failed, refused,
 * another tool, a result of another shape).
 */
export function madePicture(item: Pick<ToolItem, 'name' | 'status' | 'arguments' | 'result'>): MadePicture | null {
  if (item.name !== 'image_generate' || item.status !== 'ok' || item.result === null) return null;
  const document = LINK_AT_THE_END.exec(item.result.trimEnd())?.[1];
  return document === undefined ? null : { document, prompt: promptOf(item.arguments) };
}

/**
 * The media type to show a picture's bytes under: the one the server answered with when it
 * is an image type a document's kind names, else PNG (what the providers make).
 */
export function pictureType(answered: string): string {
  const essence = (answered.split(';')[0] ?? '').trim().toLowerCase();
  return SHOWN_TYPES.has(essence) ? essence : 'image/png';
}

/** The call's `prompt`, from its arguments as JSON text; `''` when there is none to read. */
function promptOf(args: string): string {
  try {
    const value = JSON.parse(args) as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return '';
    const prompt = (value as Record<string, unknown>)['prompt'];
    return typeof prompt === 'string' ? prompt.replace(/\s+/g, ' ').trim() : '';
  } catch {
    return '';
  }
}
