/**
 * The built-in model (§9) in words and numbers: sizes, progress, the order the
 * catalogue is offered in, which download belongs to which catalogue entry,
 * where an installed model came from. Pure: no calls, no DOM, no timers.
 */
import type { CatalogueEntry, DownloadStatus } from '../api/types.js';
import { strings } from '../i18n/en.js';
import { activeLocale, plural } from '../i18n/locale.js';

/** The units above bytes, read when used: the active language names them. */
const UNITS = ['bytesKB', 'bytesMB', 'bytesGB', 'bytesTB'] as const;

/**
 * A size in decimal units, as file managers and download pages show them:
 * `412 MB`, `1.1 GB`, `9.5 MB`, `800 bytes`. One decimal below 10, none above.
 */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 1000) {
    const n = Math.max(0, Math.round(bytes || 0));
    return plural(n, strings.bytesB).replace('{n}', String(n));
  }
  let value = bytes;
  let unit = -1;
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit += 1;
  }
  let digits = value < 10 ? 1 : 0;
  let rounded = round(value, digits);
  // 999.7 MB reads as 1 GB, not "1000 MB".
  if (rounded >= 1000 && unit < UNITS.length - 1) {
    unit += 1;
    rounded = round(rounded / 1000, 1);
    digits = 1;
  } else if (rounded >= 10 && digits === 1) {
    digits = 0;
    rounded = round(value, 0);
  }
  const shown = rounded.toLocaleString(activeLocale().tag, { minimumFractionDigits: 0, maximumFractionDigits: digits });
  return strings[UNITS[unit] ?? 'bytesTB'].replace('{n}', shown);
}

function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** A parameter count as model cards write it: `135M`, `1.5B`. */
export function formatParameters(count: number | null | undefined): string {
  if (count === null || count === undefined || !Number.isFinite(count) || count <= 0) return '';
  if (count >= 1e9) return `${round(count / 1e9, count < 1e10 ? 1 : 0)}B`;
  if (count >= 1e6) return `${Math.round(count / 1e6)}M`;
  return `${Math.round(count / 1e3)}K`;
}

/** How far a transfer has come, in whole percent; `null` when the whole size is unknown. */
export function progressPercent(received: number, total: number | null | undefined): number | null {
  if (total === null || total === undefined || total <= 0) return null;
  return Math.max(0, Math.min(100, Math.floor((received / total) * 100)));
}

/** `412 MB of 1.1 GB`, or `412 MB` when the whole size is unknown. */
export function progressText(received: number, total: number | null | undefined): string {
  if (total === null || total === undefined || total <= 0) return formatBytes(received);
  return strings.localProgress.replace('{received}', formatBytes(received)).replace('{total}', formatBytes(total));
}

/** The kind of a model that turns text into vectors for memory search: never a chat model. */
export const EMBEDDING = 'embedding';

/** Whether a model (installed, or of the catalogue) is the memory search kind, not a chat model. */
export function isEmbedding(model: { readonly kind: string }): boolean {
  return model.kind === EMBEDDING;
}

/**
 * The catalogue as it is offered: the recommended default first, then the tiny one, then
 * the other chat models as listed, and the memory search model last.
 */
export function orderCatalogue(entries: readonly CatalogueEntry[]): CatalogueEntry[] {
  const rank = (entry: CatalogueEntry): number =>
    isEmbedding(entry) ? 3 : entry.recommended === 'default' ? 0 : entry.recommended === 'tiny' ? 1 : 2;
  return entries
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => rank(a.entry) - rank(b.entry) || a.index - b.index)
    .map(({ entry }) => entry);
}

/**
 * The download of a catalogue entry: the one whose id the server gave when it
 * was started here, else the latest fetching the entry's address (started in
 * another window, or before a reload).
 */
export function downloadFor(
  entry: CatalogueEntry,
  downloads: ReadonlyMap<string, DownloadStatus>,
  startedId: string | undefined,
): DownloadStatus | undefined {
  if (startedId !== undefined) {
    const started = downloads.get(startedId);
    if (started) return started;
  }
  let found: DownloadStatus | undefined;
  for (const download of downloads.values()) if (download.url === entry.source_url) found = download;
  return found;
}

/** Whether a download is still moving (the page keeps watching it). */
export function isActive(download: DownloadStatus | undefined): boolean {
  return download?.state === 'running' || download?.state === 'checking';
}

/** Whether a download stopped short and may be tried again (an interruption resumes). */
export function mayRetry(download: DownloadStatus | undefined): boolean {
  return download?.state === 'failed' || download?.state === 'interrupted';
}

/** The name an uploaded file's model gets: its file name without `.gguf`. */
export function modelNameFromFile(fileName: string): string {
  const base = fileName.replace(/^.*[\\/]/, '');
  const name = base.replace(/\.gguf$/i, '').trim();
  return name === '' ? base : name;
}

/** Where an installed model came from, in words: downloaded from a host, uploaded, or a file on this computer. */
export function describeSource(source: string): string {
  if (source === 'upload') return strings.localSourceUpload;
  if (source.startsWith('url:')) {
    const address = source.slice(4);
    let host = address;
    try {
      host = new URL(address).host || address;
    } catch {
      // Not an address after all: show it as stored.
    }
    return strings.localSourceUrl.replace('{host}', host);
  }
  if (source.startsWith('file:')) return strings.localSourceFile.replace('{path}', source.slice(5));
  return source;
}

/** What a model of the catalogue is, in one line: approximate size, licence, tools (for a
 * chat model; the memory search model is none), and that the download is checked (every
 * entry has a checksum). */
export function entryFacts(entry: CatalogueEntry): string[] {
  return [
    strings.localAbout.replace('{size}', formatBytes(entry.size_bytes)),
    formatParameters(entry.parameters) === '' ? '' : strings.localParameters.replace('{n}', formatParameters(entry.parameters)),
    strings.localLicence.replace('{licence}', entry.licence),
    isEmbedding(entry) ? strings.localNotChat : entry.tools ? strings.localTools : strings.localNoTools,
    strings.localChecked,
  ].filter((fact) => fact !== '');
}

/** What is fetched for an entry, for "Also download memory search (84 MB)": the exact download when known. */
export function downloadSize(entry: CatalogueEntry): string {
  return formatBytes(entry.download_bytes ?? entry.size_bytes);
}
