/**
 * Dates and numbers as the page shows them, in the active locale (locale.ts).
 * Shared by every page that lists something dated or counted; returns `''`
 * for what is not a date.
 */
import { activeLocale } from './locale.js';

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '' : date.toLocaleString(activeLocale().tag, { dateStyle: 'medium', timeStyle: 'short' });
}

/**
 * A time as it reads in `zone` (an IANA name), with its weekday: a schedule's next
 * occurrences, shown in the zone they were set in. Falls back to this computer's zone
 * where the browser does not know `zone`.
 */
export function formatTimeIn(iso: string | null | undefined, zone: string): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const style = { weekday: 'short', year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' } as const;
  try {
    return date.toLocaleString(activeLocale().tag, { ...style, timeZone: zone });
  } catch {
    return date.toLocaleString(activeLocale().tag, style);
  }
}

/** The time of day alone (14:02, 2:02 PM), in this computer's zone: beside a day said elsewhere. */
export function formatClock(iso: string | null | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '' : date.toLocaleTimeString(activeLocale().tag, { timeStyle: 'short' });
}

/** Names as a list the language reads: "Ada", "Ada and Bo", "Ada, Bo and Cy". */
export function formatList(items: readonly string[]): string {
  return new Intl.ListFormat(activeLocale().tag, { style: 'long', type: 'conjunction' }).format(items);
}

export function formatDay(iso: string | null | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '' : date.toLocaleDateString(activeLocale().tag, { dateStyle: 'medium' });
}

/** A count with the locale's digit grouping; `fractionDigits` fixes the decimals shown. */
export function formatNumber(value: number | null | undefined, fractionDigits?: number): string {
  const digits = fractionDigits === undefined ? {} : { minimumFractionDigits: fractionDigits, maximumFractionDigits: fractionDigits };
  return (value ?? 0).toLocaleString(activeLocale().tag, digits);
}
