/**
 * The shapes of Skald's API answers and live events, as the page reads them
 * (see shared/contract.md and README.md "The API beyond the contract").
 *
 * Each
 * `is…` guard checks what the page relies on, so an unexpected answer fails
 * in one place with a clear error instead of deep inside a component.
 */

import type { Card, DownloadStatus, LiveEvent, NextModel, Person, Role, Unlocked } from './generated/index.js';

/*
 * The answers and bodies of the routes, generated from their Rust types
 * (src/http/api_types.rs; regenerate with `cargo test --lib export_bindings`).
 * What follows here is what the page alone knows: names for parts of them,
 * guards, and the answers whose Rust types are not generated yet.
 */
export type * from './generated/index.js';

/** A role with every attribute (`GET /api/roles`, administrators). */
export type RoleDetail = Role;

/** How far a model download is. */
export type DownloadState = DownloadStatus['state'];

/** One conversation (`GET /api/sessions`). */
export interface ChatSession {
  readonly id: string;
  readonly agent: string;
  /** The model the conversation is pinned to, or `null` to let each turn choose. */
  readonly model: string | null;
  readonly title: string;
  readonly created_at: string;
  readonly updated_at: string;
  /** The latest turn's state: `running`, `parked`, `done`, `stopped`, `error`. */
  readonly turn_state: string | null;
  readonly outside_content: boolean;
  /** Kept at the top of the list. */
  readonly pinned: boolean;
  /** Put away: out of the list unless the person shows the archived ones. */
  readonly archived: boolean;
}

/** A tool call as an assistant row lists it. */
export interface ToolCallRecord {
  readonly id: string;
  readonly name: string;
  /** The arguments as the model sent them: usually JSON text. */
  readonly arguments: string;
}

/** One row of a conversation's history, oldest first. */
export interface HistoryRow {
  readonly id: number;
  readonly turn_id: string;
  /** `user`, `assistant` or `tool`. */
  readonly role: string;
  readonly text: string;
  /** user: `sent`; assistant: `tool_calls`, `done`, `stopped`, `error`; tool: `ok`, `error`, `denied`, `cancelled`. */
  readonly status: string;
  readonly tool_calls?: readonly ToolCallRecord[];
  readonly tool_call_id?: string;
  readonly tool_name?: string;
  readonly model?: string;
  readonly error_code?: string;
  readonly error_message?: string;
  /** The sub-agent frame that wrote the row; absent for the conversation itself. */
  readonly frame_id?: string | null;
  readonly created_at: string;
}

/** An approval card: what the assistant wants to run, for whom, and why. */
export type ApprovalCard = Extract<Card, { readonly kind: 'approval' }>;

/** A question the assistant asked (`clarify`). */
export type QuestionCard = Extract<Card, { readonly kind: 'question' }>;

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
    (value['kind'] === 'approval' || value['kind'] === 'question') &&
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

/** `GET /api/sessions/{id}`: the conversation and the model its next turn would use. */
export interface SessionDetail extends ChatSession {
  /** `null` when no model the role allows is usable now. */
  readonly next_model: NextModel | null;
}

/** What an administrator may change in a role; absent fields stay. */
export type RolePatch = Partial<Omit<RoleDetail, 'id'>>;

export function isDownloadStatus(value: unknown): value is DownloadStatus {
  return isRecord(value) && typeof value['id'] === 'string' && typeof value['state'] === 'string' && typeof value['received'] === 'number';
}
