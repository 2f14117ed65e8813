/**
 * Dates as the page shows them, in the person's own locale. Shared by every
 * page that lists something dated; returns `''` for what is not a date.
 */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '' : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export function formatDay(iso: string | null | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '' : date.toLocaleDateString(undefined, { dateStyle: 'medium' });
}

/** A count with the locale's digit grouping. */
export function formatNumber(value: number | null | undefined): string {
  return (value ?? 0).toLocaleString();
}
