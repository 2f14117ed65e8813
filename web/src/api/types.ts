/**
 * The shapes of Skald's API answers and live events, as the page reads them
 * (see shared/contract.md and README.md "The API beyond the contract").
 *
 * Only the fields the page uses are typed; the server may send more. Each
 * `is…` guard checks what the page relies on, so an unexpected answer fails
 * in one place with a clear error instead of deep inside a component.
 */

/** A person as anyone may know them: the picker, `user` of every unlock. */
export interface Person {
  readonly id: string;
  readonly name: string;
  /** The role id: `admin`, `member`, `restricted`, or one an administrator made. */
  readonly role: string;
  /** `active`, or `pending` until they enrol. */
  readonly status: string;
}

/** The answer of setup, login, enrolment and recovery. */
export interface Unlocked {
  readonly token: string;
  readonly user: Person;
  /** At setup, enrolment and recovery only: shown once, to this person alone. */
  readonly recovery_code?: string;
}

/** What a role allows; the fields the page reads. */
export interface Role {
  readonly id: string;
  readonly label: string;
  readonly manage_instance: boolean;
  readonly may_approve: boolean;
  readonly privacy_tier: string;
}

export interface Me {
  readonly user: Person;
  readonly role: Role;
}

/** Where a provider's words go (§16). */
export type Privacy = 'local' | 'remote';

/** One model of `GET /api/models`. */
export interface Model {
  /** `provider/model` */
  readonly name: string;
  readonly provider: string;
  readonly model_id: string;
  readonly strength: string;
  readonly privacy: Privacy;
  readonly configured_by: string;
}

/** A model server found on this computer (`GET /api/providers/detect`). */
export interface DetectedServer {
  readonly label: string;
  readonly kind: string;
  readonly base_url: string;
  readonly models: readonly unknown[];
}

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
