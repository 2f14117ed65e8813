/**
 * The conversation list by when each was last used — today, yesterday, the last seven
 * days, the last thirty, earlier — in the person's own calendar days, newest first
 * within each group. Pure: `now` is given.
 */
import type { Conversation } from '../api/types.js';

export type Period = 'today' | 'yesterday' | 'week' | 'month' | 'older';

export interface SessionGroup {
  readonly period: Period;
  readonly sessions: readonly Conversation[];
}

const ORDER: readonly Period[] = ['today', 'yesterday', 'week', 'month', 'older'];

export function groupByPeriod(sessions: readonly Conversation[], now: Date): SessionGroup[] {
  const today = startOfDay(now);
  const byPeriod = new Map<Period, Conversation[]>();
  const newestFirst = [...sessions].sort((a, b) => Date.parse(b.updated_at) - Date.parse(a.updated_at));
  for (const session of newestFirst) {
    const period = periodOf(new Date(session.updated_at), today);
    byPeriod.set(period, [...(byPeriod.get(period) ?? []), session]);
  }
  return ORDER.flatMap((period) => {
    const found = byPeriod.get(period);
    return found ? [{ period, sessions: found }] : [];
  });
}

function periodOf(when: Date, today: Date): Period {
  // Calendar days, counted in local time: "yesterday" at 00:10 means before midnight.
  const days = Math.round((today.getTime() - startOfDay(when).getTime()) / 86_400_000);
  if (days <= 0) return 'today';
  if (days === 1) return 'yesterday';
  if (days < 7) return 'week';
  if (days < 30) return 'month';
  return 'older';
}

function startOfDay(date: Date): Date {
  return new Date(date.getFullYear(), date.getMonth(), date.getDate());
}
