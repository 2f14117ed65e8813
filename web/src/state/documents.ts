/**
 * Documents as the Files page shows them: which view a file opens in, its kind and its
 * status in words, which page to show, what an upload's progress and refusal say. Pure:
 * no calls, no DOM, no timers.
 */
import { ApiError } from '../api/client.js';
import type { Document, DocumentKind } from '../api/types.js';
import { strings } from '../i18n/en.js';
import { describeError } from '../i18n/errors.js';
import { formatBytes } from './local-models.js';

/** The largest file the server takes (64 MiB): a larger one is refused here, before its bytes leave. */
export const MAX_DOCUMENT_BYTES = 64 * 1024 * 1024;

/**
 * Above this, a Markdown file is shown page by page as text, like any other text file:
 * rendering megabytes of Markdown at once would stall the page.
 */
export const MARKDOWN_WHOLE_BYTES = 1024 * 1024;

/**
 * How a document is shown: a PDF drawn by pdf.js, an image, Markdown rendered (sanitized),
 * or the text the server extracted, page by page, as plain text — never the file's own
 * HTML or markup.
 */
export type DocumentView = 'pdf' | 'image' | 'markdown' | 'text';

const IMAGE_TYPES: Partial<Readonly<Record<DocumentKind, string>>> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
};

export function viewOf(document: Pick<Document, 'kind' | 'size'>): DocumentView {
  if (document.kind === 'pdf') return 'pdf';
  if (imageType(document.kind) !== null) return 'image';
  if (document.kind === 'markdown' && document.size <= MARKDOWN_WHOLE_BYTES) return 'markdown';
  return 'text';
}

/**
 * The media type an image is shown under, from its kind — never from what the file or an
 * answer claims, so a `data:` address can only ever hold one of these four. `null` for
 * anything that is not an image.
 */
export function imageType(kind: DocumentKind): string | null {
  return IMAGE_TYPES[kind] ?? null;
}

/** The kind as people know it: the format's own name (PDF, DOCX, Markdown), or "Text". */
export function kindLabel(kind: DocumentKind): string {
  switch (kind) {
    case 'text':
      return strings.fileKindText;
    case 'markdown':
      return 'Markdown';
    case 'webp':
      return 'WebP';
    default:
      return kind.toUpperCase();
  }
}

/** The kinds that are pictures: they go to models that read pictures as they are. */
const PICTURE_KINDS: ReadonlySet<Document['kind']> = new Set(['png', 'jpeg', 'webp', 'gif']);

/**
 * Whether a document can go with a message: once read with its words, or a picture even
 * without any (a model that reads pictures gets it as it is; the server refuses it, with
 * why, for one that does not).
 */
export function attachable(document: Pick<Document, 'kind' | 'status'>): boolean {
  return document.status === 'ready' || (document.status === 'no_text' && PICTURE_KINDS.has(document.kind));
}

/** "Reading…", "Ready", "No text found — why", "Failed — why". */
export function statusSentence(document: Pick<Document, 'status' | 'status_detail'>): string {
  const detail = document.status_detail?.trim() ?? '';
  switch (document.status) {
    case 'reading':
      return strings.fileStatusReading;
    case 'ready':
      return strings.fileStatusReady;
    case 'no_text':
      return detail === '' ? strings.fileStatusNoTextBare : strings.fileStatusNoText.replace('{detail}', detail);
    case 'failed':
      return detail === '' ? strings.fileStatusFailedBare : strings.fileStatusFailed.replace('{detail}', detail);
  }
}

/**
 * What is said once reading a document ends: it is ready, has no text, or failed.
 * `null` while it is still being read.
 */
export function statusAnnouncement(document: Pick<Document, 'name' | 'status'>): string | null {
  switch (document.status) {
    case 'reading':
      return null;
    case 'ready':
      return strings.fileNowReady.replace('{name}', document.name);
    case 'no_text':
      return strings.fileNowNoText.replace('{name}', document.name);
    case 'failed':
      return strings.fileNowFailed.replace('{name}', document.name);
  }
}

/**
 * The page to show of `pages` (counted from 1) when `requested` is asked for: within the
 * document, so a link to a page beyond its end shows the last one. `pages` unknown
 * (`null`), any page from 1 up is taken as asked.
 */
export function pageToShow(requested: number, pages: number | null): number {
  const wanted = Number.isInteger(requested) && requested >= 1 ? requested : 1;
  return pages === null || pages < 1 ? wanted : Math.min(wanted, pages);
}

/** Why a file is not worth sending at all (empty, too large), or `null` to send it. */
export function uploadRefusal(file: { readonly name: string; readonly size: number }): string | null {
  if (file.size === 0) return strings.filesEmptyFile.replace('{name}', file.name);
  if (file.size > MAX_DOCUMENT_BYTES) {
    return strings.filesTooLarge
      .replace('{name}', file.name)
      .replace('{size}', formatBytes(file.size))
      .replace('{limit}', formatBytes(MAX_DOCUMENT_BYTES));
  }
  return null;
}

/**
 * Why an upload failed, in words. The server words its refusals (an unsupported type, a
 * duplicate naming the file already here). A body too large is said here, with the limit,
 * whoever refused it: the server's size guard may answer before any handler, without words.
 */
export function uploadFailure(error: unknown, name: string): string {
  if (error instanceof ApiError && (error.code === 'too_large' || error.status === 413)) {
    return strings.filesTooLargeSent.replace('{name}', name).replace('{limit}', formatBytes(MAX_DOCUMENT_BYTES));
  }
  return describeError(error);
}

/** How much of an upload has been sent, in whole percent (0 to 100). */
export function uploadPercent(sent: number, total: number): number {
  if (!(total > 0)) return 0;
  return Math.max(0, Math.min(100, Math.floor((sent / total) * 100)));
}
