/**
 * The shapes of Skald's API answers and live events, as the page reads them
 * (see shared/contract.md and README.md "The API beyond the contract").
 *
 * Each
 * `is…` guard checks what the page relies on, so an unexpected answer fails
 * in one place with a clear error instead of deep inside a component.
 */

import type { Card, DownloadStatus, LiveEvent, Person, Role, Unlocked } from './generated/index.js';

/*
 * The answers and bodies of the routes, generated from their Rust types
 * (src/http/api_types.rs; regenerate with `cargo test --lib export_bindings`).
 * What follows here is what the page alone knows: names for parts of them,
 * and the guards.
 */
export type * from './generated/index.js';

/** Where a document lives: the person's own file, or the shared pool everyone reads. */
export type { Pool as DocumentPool } from './generated/index.js';

/** A role with every attribute (`GET /api/roles`, administrators). */
export type RoleDetail = Role;

/** How far a model download is. */
export type DownloadState = DownloadStatus['state'];


/** An approval card: what the assistant wants to run, for whom, and why. */
export type ApprovalCard = Extract<Card, { readonly kind: 'approval' }>;

/** A question the assistant asked (`clarify`). */
export type QuestionCard = Extract<Card, { readonly kind: 'question' }>;

/** A form a tool server asks the person to fill in while its call runs (MCP elicitation). */
export type FormCard = Extract<Card, { readonly kind: 'form' }>;

/** A tool server's request for a model's answer while its call runs (MCP sampling). */
export type SampleCard = Extract<Card, { readonly kind: 'sample' }>;

/** Turn events: those that name a conversation and a turn. */
export type TurnEvent = Extract<LiveEvent, { readonly turn: string }>;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isPerson(value: unknown): value is Person {
  return isRecord(value) && typeof value['id'] === 'string' && typeof value['name'] === 'string';
}

export function isUnlocked(value: unknown): value is Unlocked {
  return isRecord(value) && typeof value['token'] === 'string' && isPerson(value['user']);
}

export function isCard(value: unknown): value is Card {
  return (
    isRecord(value) &&
    typeof value['id'] === 'string' &&
    (value['kind'] === 'approval' || value['kind'] === 'question' || value['kind'] === 'form' || value['kind'] === 'sample') &&
    isRecord(value['details'])
  );
}

/** Whether a parsed WebSocket message is an event the page knows. */
export function isLiveEvent(value: unknown): value is LiveEvent {
  return isRecord(value) && typeof value['type'] === 'string';
}

/** Whether an event belongs to a turn. */
export function isTurnEvent(event: LiveEvent): event is TurnEvent {
  return 'turn' in event && typeof event.turn === 'string' && 'session' in event;
}

// ---- part 2: notes, privacy, administration ---------------------------------

/** What an administrator may change in a role; absent fields stay. */
export type RolePatch = Partial<Omit<RoleDetail, 'id'>>;

export function isDownloadStatus(value: unknown): value is DownloadStatus {
  return isRecord(value) && typeof value['id'] === 'string' && typeof value['state'] === 'string' && typeof value['received'] === 'number';
}
