/**
 * Memories as the Memory page shows them (§10): whom each is about, as one key a
 * filter, a count and an erase can share, and the list narrowed by pool and
 * subject. Pure: never calls the server.
 *
 * A subject's key is `self`, `instance` or a member's id, as `GET /api/memories`
 * takes it. The server keeps a shared memory "about self" as about its owner by
 * id, so a member id that is the person's own reads as `self` here: "you" is one
 * subject on the page, whichever pool holds it.
 */
import type { Memory, MemorySubject, Pool } from '../api/types.js';

export type SubjectKey = string;

export function subjectKey(subject: MemorySubject, me: string): SubjectKey {
  if (subject.kind === 'member') return subject.id === me ? 'self' : subject.id;
  return subject.kind;
}

/** The subject `POST /api/memories/erase` takes for a key. */
export function subjectOfKey(key: SubjectKey): MemorySubject {
  if (key === 'self' || key === 'instance') return { kind: key };
  return { kind: 'member', id: key };
}

/** Every subject the list holds, each once: you first, then this home, then the others as they come. */
export function subjectKeys(memories: readonly Memory[], me: string): SubjectKey[] {
  const keys = new Set(memories.map((memory) => subjectKey(memory.subject, me)));
  const rank = (key: SubjectKey): number => (key === 'self' ? 0 : key === 'instance' ? 1 : 2);
  return [...keys].sort((a, b) => rank(a) - rank(b));
}

export interface MemoryFilters {
  /** `''`: either pool. */
  readonly pool: Pool | '';
  /** `''`: about anyone. */
  readonly subject: SubjectKey;
}

export function filterMemories(memories: readonly Memory[], filters: MemoryFilters, me: string): Memory[] {
  return memories.filter(
    (memory) =>
      (filters.pool === '' || memory.pool === filters.pool) && (filters.subject === '' || subjectKey(memory.subject, me) === filters.subject),
  );
}

/** How many of the list are about `key`: what "Erase everything about …" says it will erase. */
export function countAbout(memories: readonly Memory[], key: SubjectKey, me: string): number {
  return memories.filter((memory) => subjectKey(memory.subject, me) === key).length;
}
