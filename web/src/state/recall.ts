/**
 * Which memories a turn used, read from its `recall` results (§10): the server reads
 * what bears on the person's message into the turn as a recall of its own, right after
 * the message, and the model may recall again later in the turn. Each result is one
 * memory a line, `mem_… (private|shared): sentence`; "nothing remembered matches …"
 * names none. The chat shows the memories of every recall of a turn as one line under
 * the reply ("Used 2 memories"), each once, instead of a row per recall. Pure.
 */
import type { Pool } from '../api/types.js';
import type { ToolItem, TurnItem } from './transcript.js';

/** The tool whose results are memories. */
export const RECALL_TOOL = 'recall';

/** A memory as a recall result names it. */
export interface RecalledMemory {
  readonly id: string;
  readonly pool: Pool;
  readonly text: string;
}

/** One line of a recall result: the id, the pool in brackets, a colon, the sentence. */
const LINE = /^(mem_[A-Za-z0-9_-]+) \((private|shared)\): (.*\S)\s*$/;

/**
 * The memories one recall result names, in its order. A line in any other shape (the
 * "nothing remembered" line, or words the page does not know) names none.
 */
export function parseRecall(result: string): RecalledMemory[] {
  const found: RecalledMemory[] = [];
  for (const line of unwrap(result).split(/\r?\n/)) {
    const match = LINE.exec(line.trim());
    if (match === null) continue;
    const [, id = '', pool, text = ''] = match;
    found.push({ id, pool: pool === 'shared' ? 'shared' : 'private', text });
  }
  return found;
}

/** The memories every finished recall of a turn named, each once, in the order first named. */
export function usedMemories(items: readonly TurnItem[]): RecalledMemory[] {
  const seen = new Map<string, RecalledMemory>();
  for (const item of items) {
    if (!isRecall(item) || item.status !== 'ok' || item.result === null) continue;
    for (const memory of parseRecall(item.result)) if (!seen.has(memory.id)) seen.set(memory.id, memory);
  }
  return [...seen.values()];
}

/**
 * Whether a call is a recall the "used memories" line stands for, rather than a row of
 * its own: one that found something, or one still running (a recall is quick; the line
 * shows what it found). A recall that found nothing, failed, was refused or was cut off
 * with its turn keeps its row, so the person can see what happened.
 */
export function summarisedRecall(item: ToolItem, turnEnded: boolean): boolean {
  if (!isRecall(item)) return false;
  if (item.status === 'running') return !turnEnded;
  return item.status === 'ok' && item.result !== null && parseRecall(item.result).length > 0;
}

function isRecall(item: TurnItem): item is ToolItem {
  return item.kind === 'tool' && item.name === RECALL_TOOL;
}

/** A result the server sent as a JSON string is its text; anything else is read as it came. */
function unwrap(result: string): string {
  if (!result.startsWith('"')) return result;
  try {
    const value = JSON.parse(result) as unknown;
    return typeof value === 'string' ? value : result;
  } catch {
    return result;
  }
}
