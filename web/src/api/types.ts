/**
 * The shapes of Skald's API answers and live events, as the page reads them
 * (see shared/contract.md and README.md "The API beyond the contract").
 *
 * Each
 * `is…` guard checks what the page relies on, so an unexpected answer fails
 * in one place with a clear error instead of deep inside a component.
 */

import type {
  AuditEntry,
  DownloadStatus,
  LocalModel,
  Person,
  PersonUsage,
  PrivacyAgent,
  PrivacyProvider,
  Role,
  Unlocked,
} from './generated/index.js';

/*
 * The answers and bodies of the routes, generated from their Rust types
 * (src/http/api_types.rs; regenerate with `cargo test --lib export_bindings`).
 * What follows here is what the page alone knows: live events, guards, and the
 * answers whose Rust types are not generated yet.
 */
export type * from './generated/index.js';

/** A role with every attribute (`GET /api/roles`, administrators). */
export type RoleDetail = Role;

/** How far a model download is. */
export type DownloadState = DownloadStatus['state'];

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

/** Details of an approval card: what the assistant wants to run, and why. */
export interface ApprovalDetails {
  readonly tool: string;
  readonly arguments: unknown;
  readonly arguments_hash: string;
  readonly agent?: string;
  readonly why?: string;
  readonly reason?: string;
  readonly for?: { readonly id: string; readonly name: string };
  readonly turn_id?: string;
  readonly call_id?: string;
}

/** Details of a question the assistant asked (`clarify`). */
export interface QuestionDetails {
  readonly question: string;
  readonly suggestions?: readonly string[];
  readonly agent?: string;
  readonly turn_id?: string;
  readonly call_id?: string;
}

interface CardBase {
  readonly id: string;
  /** `pending`, or how it was settled (`allowed`, `denied`, `answered`, `withdrawn`, …). */
  readonly state: string;
  readonly summary: string;
  readonly session_id: string;
  readonly created_at: string;
}

export interface ApprovalCard extends CardBase {
  readonly kind: 'approval';
  readonly details: ApprovalDetails;
}

export interface QuestionCard extends CardBase {
  readonly kind: 'question';
  readonly details: QuestionDetails;
}

/** Anything waiting on a person (`GET /api/inbox`, the `card` event). */
export type Card = ApprovalCard | QuestionCard;

/** What a turn reports when it failed. */
export interface TurnFailure {
  readonly code: string;
  readonly message: string;
}

/** Fields every turn event carries. */
interface TurnEventBase {
  readonly session: string;
  readonly turn: string;
  readonly seq: number;
  /** Set when the event comes from inside a sub-agent's frame (`call_agent`). */
  readonly frame?: string | null;
}

/** The events of `/api/ws`, as the page uses them. */
export type LiveEvent =
  | ({ readonly type: 'turn_started'; readonly model?: string; readonly agent?: string; readonly resumed?: boolean } & TurnEventBase)
  | ({ readonly type: 'token'; readonly text: string } & TurnEventBase)
  | ({ readonly type: 'tool_call_started'; readonly call: { readonly id: string; readonly name: string; readonly arguments: string } } & TurnEventBase)
  | ({ readonly type: 'tool_call_finished'; readonly call_id: string; readonly status: string; readonly result?: string } & TurnEventBase)
  | ({ readonly type: 'card'; readonly card: Card } & TurnEventBase)
  | ({ readonly type: 'turn_parked' } & TurnEventBase)
  | ({ readonly type: 'retrying'; readonly attempt: number; readonly wait_ms: number; readonly reason: string } & TurnEventBase)
  | ({ readonly type: 'fallback'; readonly from: string; readonly to: string; readonly reason: string } & TurnEventBase)
  | ({ readonly type: 'compacted' } & TurnEventBase)
  | ({ readonly type: 'error'; readonly error: TurnFailure } & TurnEventBase)
  | ({ readonly type: 'turn_ended'; readonly status: string; readonly error?: TurnFailure | null } & TurnEventBase)
  | ({ readonly type: 'frame_started'; readonly agent?: string; readonly depth?: number; readonly call_id?: string } & TurnEventBase)
  | ({ readonly type: 'frame_ended'; readonly status?: string } & TurnEventBase)
  | { readonly type: 'card_decided'; readonly card: Card }
  | { readonly type: 'notify'; readonly title: string; readonly body: string }
  /** A conversation's model named it. */
  | { readonly type: 'titled'; readonly session: string; readonly title: string }
  /** A new notice waits in `GET /api/notices`. */
  | { readonly type: 'notice' }
  /** A model download this administrator started moved on. */
  | { readonly type: 'local_model_download'; readonly download: DownloadStatus }
  | { readonly type: 'lagged' }
  | { readonly type: 'hello' }
  | { readonly type: 'heartbeat' };

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

/** Someone else changed what shapes where my words go (`GET /api/notices`). */
export interface Notice {
  readonly id: number;
  /** `agent_changed`, `provider_added`, `provider_changed`, `provider_deleted`; others may come. */
  readonly kind: string;
  readonly body: Record<string, unknown> | null;
  readonly created_at: string;
  /**
   * A change that widened where my words go or what runs without asking me
   * (`held_change`): my turns wait until I decide on it.
   */
  readonly holds?: boolean;
}

/** `GET /api/me/privacy`: who can see my words (§3). */
export interface PrivacyReport {
  readonly keys: readonly { readonly kind: string; readonly what: string }[];
  readonly supervisors: readonly { readonly id?: string; readonly name: string }[];
  readonly providers: readonly PrivacyProvider[];
  readonly agents: readonly PrivacyAgent[];
  readonly administrators_see: {
    readonly name: string;
    readonly role: string;
    readonly usage: PersonUsage | null;
    readonly audit: readonly AuditEntry[];
  };
  readonly notices: readonly Notice[];
}

/** What an administrator may change in a role; absent fields stay. */
export type RolePatch = Partial<Omit<RoleDetail, 'id'>>;

// ---- the built-in model (§9) -------------------------------------------------

/** A model that crashed the built-in model's worker process recently. */
export interface EngineCrash {
  /** The model's id. */
  readonly model: string;
  /** Crashes within the last ten minutes. */
  readonly count: number;
  readonly last_at: string;
  /** "killed by SIGSEGV", "exited with code 3". */
  readonly how: string;
  readonly signal: string | null;
  readonly exit_code: number | null;
  /** The last lines the worker wrote to its log: never a prompt or a reply. */
  readonly stderr_tail: readonly string[];
  /** Not started again until an administrator asks (`POST /api/local-models/{id}/retry`). */
  readonly given_up: boolean;
}

/** What the built-in engine is doing. */
export interface EngineStatus {
  readonly available: boolean;
  /** The model held in memory: `model` is its id. */
  readonly loaded: { readonly model: string; readonly context: number; readonly load_ms: number; readonly footprint_bytes: number } | null;
  /** The worker process holding models, while one runs. */
  readonly worker_pid: number | null;
  readonly requests_answered: number;
  readonly crashes: readonly EngineCrash[];
  /** The instruction sets the engine needs of the processor. */
  readonly compiled_for: readonly string[];
  readonly threads: number;
  readonly context: number;
  readonly idle_seconds: number;
}

/** `GET /api/local-models` */
export interface LocalModelsReport {
  readonly models: readonly LocalModel[];
  readonly disk_bytes: number;
  readonly engine: EngineStatus;
}

export function isDownloadStatus(value: unknown): value is DownloadStatus {
  return isRecord(value) && typeof value['id'] === 'string' && typeof value['state'] === 'string' && typeof value['received'] === 'number';
}
