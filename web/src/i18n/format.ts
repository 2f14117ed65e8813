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
