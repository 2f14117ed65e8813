/**
 * The approval rules page's arithmetic (§8.4): the order the gate weighs
 * shared rules in is their priority, lowest first, so "move up" and "move
 * down" are priority changes.
 *
 * Pure: returns the priorities to write, never calls the server.
 */
import type { ApprovalRule } from '../api/types.js';

/** The highest priority the server takes. */
const MAX_PRIORITY = 1_000_000;

/** The order the page lists rules in: as the gate weighs them, ties by age. */
export function sortRules(rules: readonly ApprovalRule[]): ApprovalRule[] {
  return [...rules].sort((a, b) => a.priority - b.priority || a.id - b.id);
}

/** A rule that needs a new priority. */
export interface PriorityChange {
  readonly rule: ApprovalRule;
  readonly priority: number;
}

/**
 * The changes that move one rule a step up (`-1`, weighed earlier) or down
 * (`1`): afterwards it is weighed before (after) the rule that was above
 * (below) it. Two rules of different priorities swap them. Within a run of
 * equal priorities the gate sees no order at all, so the rule steps out of
 * the run by one point of priority — ahead of (behind) every rule of the
 * run — with one change; only at the ends of the range (0, 1000000) is the
 * list numbered again in steps of 10.
 */
export function moveRule(rules: readonly ApprovalRule[], id: number, direction: -1 | 1): PriorityChange[] {
  const sorted = sortRules(rules);
  const index = sorted.findIndex((rule) => rule.id === id);
  const target = index + direction;
  const moving = sorted[index];
  const other = sorted[target];
  if (moving === undefined || other === undefined) return [];
  if (moving.priority !== other.priority) {
    return [
      { rule: moving, priority: other.priority },
      { rule: other, priority: moving.priority },
    ];
  }
  const nudged = other.priority + direction;
  if (nudged >= 0 && nudged <= MAX_PRIORITY) return [{ rule: moving, priority: nudged }];
  const order = [...sorted];
  order[index] = other;
  order[target] = moving;
  return order.flatMap((rule, i) => ((i + 1) * 10 === rule.priority ? [] : [{ rule, priority: (i + 1) * 10 }]));
}

/** A priority for a new rule that puts it after every rule there is (but before a catch-all at the end). */
export function nextPriority(rules: readonly ApprovalRule[]): number {
  const specific = rules.filter((rule) => rule.tool !== '*');
  const highest = specific.reduce((max, rule) => Math.max(max, rule.priority), 0);
  return Math.min(highest + 10, MAX_PRIORITY);
}
