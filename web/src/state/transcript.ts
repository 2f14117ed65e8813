/**
 * A conversation as the page shows it: turns, each the person's message and
 * what the assistant did in reply (text, tool calls, notes), built from the
 * stored history and kept current by live events.
 *
 * Pure: every function returns a new transcript and never touches the
 * network or the DOM, so the chat view stays a thin driver around it. The
 * server's history is the truth; when an event cannot be placed (a gap in
 * `seq`, a turn we never saw start) the result asks the caller to reload it.
 */
import type { HistoryRow, TurnEvent, TurnFailure } from '../api/types.js';

export type TurnStatus = 'sending' | 'running' | 'parked' | 'done' | 'stopped' | 'error';
export type ToolStatus = 'running' | 'ok' | 'error' | 'denied' | 'cancelled';

export interface TextItem {
  readonly kind: 'text';
  readonly text: string;
}

export interface ToolItem {
  readonly kind: 'tool';
  /** The call id, which approval and question cards name as `call_id`. */
  readonly id: string;
  readonly name: string;
  /** The arguments as the model sent them (JSON text, usually). */
  readonly arguments: string;
  readonly status: ToolStatus;
  readonly result: string | null;
  /** How far a running call got, as a tool server reports it. */
  readonly progress?: ToolProgress | null;
}

/** A tool server's word on how far its call got. */
export interface ToolProgress {
  readonly progress: number;
  readonly total: number | null;
  readonly message: string | null;
}

/** Something the person should know about the turn's progress. */
export interface NoteItem {
  readonly kind: 'note';
  readonly note: 'retrying' | 'fallback' | 'compacted';
  readonly detail: string;
}

export type TurnItem = TextItem | ToolItem | NoteItem;

export interface Turn {
  /** Stable across the move from "sending" to a server turn id, for rendering. */
  readonly key: string;
  /** The server's turn id, `null` while the message is still being sent. */
  readonly id: string | null;
  readonly userText: string | null;
  readonly items: readonly TurnItem[];
  readonly status: TurnStatus;
  /** `provider/model` the turn's words went to, once known. */
  readonly model: string | null;
  readonly error: TurnFailure | null;
  /** The last `seq` applied, to notice a missed event. */
  readonly seq: number;
}

export interface Transcript {
  readonly sessionId: string;
  readonly turns: readonly Turn[];
}

/** An event applied, and whether the history must be read again to be sure. */
export interface Applied {
  readonly transcript: Transcript;
  readonly reload: boolean;
}

export function emptyTranscript(sessionId: string): Transcript {
  return { sessionId, turns: [] };
}

/**
 * Builds the transcript from the stored history, or a page of it. `turnState`
 * is the session's latest turn state: it says whether a last turn without an
 * end row is still running or waits on a card. `earlier` says the rows are a
 * page before the latest, so none of its turns is the conversation's last.
 */
export function fromHistory(sessionId: string, rows: readonly HistoryRow[], turnState: string | null, earlier = false): Transcript {
  const turns: Turn[] = [];
  const byId = new Map<string, number>();
  const touch = (turnId: string, change: (turn: Turn) => Turn): void => {
    let index = byId.get(turnId);
    if (index === undefined) {
      index = turns.length;
      byId.set(turnId, index);
      turns.push(newTurn(turnId, turnId, null, 'running'));
    }
    const turn = turns[index];
    if (turn !== undefined) turns[index] = change(turn);
  };
  for (const row of rows) {
    // A sub-agent's own rows stay inside its frame; its answer reaches the
    // conversation as the result of the call_agent call.
    if (row.frame_id) continue;
    switch (row.role) {
      case 'user':
        touch(row.turn_id, (turn) => ({ ...turn, userText: row.text }));
        break;
      case 'assistant':
        touch(row.turn_id, (turn) => {
          let items = row.text === '' ? turn.items : [...turn.items, { kind: 'text', text: row.text } as const];
          for (const call of row.tool_calls ?? []) {
            items = [...items, { kind: 'tool', id: call.id, name: call.name, arguments: call.arguments, status: 'running', result: null }];
          }
          const ended = endStatus(row.status);
          return {
            ...turn,
            items,
            model: row.model ?? turn.model,
            status: ended ?? turn.status,
            error:
              row.status === 'error'
                ? { code: row.error_code ?? 'error', message: row.error_message ?? '' }
                : turn.error,
          };
        });
        break;
      case 'tool':
        touch(row.turn_id, (turn) => ({
          ...turn,
          items: turn.items.map((item) =>
            item.kind === 'tool' && item.id === row.tool_call_id
              ? { ...item, status: toolStatus(row.status), result: row.text }
              : item,
          ),
        }));
        break;
      default:
        break;
    }
  }
  // A turn without its end row: the last one runs or waits on a card; an
  // older one was cut off (the server marks those at the next unlock). The
  // session and its history are two reads: a session read just before a new
  // turn began still names the previous turn's end, so only `parked` is
  // believed of a last turn without an end row — its end row, or the live
  // `turn_ended`, says when it is over.
  // An earlier page (`earlier`) has no last turn of the conversation in it.
  const last = earlier ? -1 : turns.length - 1;
  turns.forEach((turn, index) => {
    if (turn.status !== 'running') return;
    const status: TurnStatus = index !== last ? 'error' : turnState === 'parked' ? 'parked' : 'running';
    turns[index] = { ...turn, status };
  });
  return { sessionId, turns };
}

/**
 * The history just read, joined with what is on screen: a turn the history
 * has not finished keeps what the live events already showed (streamed text
 * is stored only when the turn ends), and turns the read did not include yet
 * (a message being sent, or accepted after the read began) stay at the end.
 * A turn on screen keeps its key, so what the person opened or selected in it
 * stays as it was: the page draws a turn anew only when its key changes.
 */
export function mergeLive(loaded: Transcript, current: Transcript): Transcript {
  if (loaded.sessionId !== current.sessionId) return loaded;
  const byId = new Map(current.turns.filter((turn) => turn.id !== null).map((turn) => [turn.id, turn]));
  const turns = loaded.turns.map((turn) => {
    const live = byId.get(turn.id);
    if (live === undefined) return turn;
    if (isEnded(turn.status)) return { ...turn, key: live.key };
    return { ...turn, key: live.key, items: live.items.length >= turn.items.length ? live.items : turn.items, seq: live.seq, model: live.model ?? turn.model, status: isEnded(live.status) ? live.status : turn.status, error: live.error ?? turn.error };
  });
  const known = new Set(loaded.turns.map((turn) => turn.id));
  // The read was a page: the earlier turns on screen stay before it.
  const first = current.turns.findIndex((turn) => turn.id !== null && turn.id === loaded.turns[0]?.id);
  const earlier = first > 0 ? current.turns.slice(0, first).filter((turn) => turn.id !== null && !known.has(turn.id)) : [];
  const newer = current.turns.slice(Math.max(first, 0)).filter((turn) => turn.id === null || !known.has(turn.id));
  return { ...loaded, turns: [...earlier, ...turns, ...newer] };
}

/** A page of earlier turns put before those on screen (a turn already there is not repeated). */
export function withEarlier(current: Transcript, earlier: Transcript): Transcript {
  if (earlier.sessionId !== current.sessionId) return current;
  const shown = new Set(current.turns.map((turn) => turn.id));
  return { ...current, turns: [...earlier.turns.filter((turn) => !shown.has(turn.id)), ...current.turns] };
}

/** How many turns a page of history rows holds. */
export function turnsIn(rows: readonly HistoryRow[]): number {
  return new Set(rows.map((row) => row.turn_id)).size;
}

function isEnded(status: TurnStatus): boolean {
  return status === 'done' || status === 'stopped' || status === 'error';
}

/** Adds the person's message, shown at once while it is being sent. */
export function addSending(transcript: Transcript, key: string, text: string): Transcript {
  return { ...transcript, turns: [...transcript.turns, newTurn(key, null, text, 'sending')] };
}

/**
 * A retry of the failed last turn, shown at once: a new turn without a
 * message of its own (the server answers the person's last message again).
 */
export function addRetrying(transcript: Transcript, key: string): Transcript {
  return { ...transcript, turns: [...transcript.turns, newTurn(key, null, null, 'sending')] };
}

/**
 * Another version of turn `turnId` on its way (the person's message edited, or `null` for
 * the same message answered again): the transcript reads as its new path will, the turns
 * from that one on replaced by the new one. They stay on the server, on their own path.
 */
export function addVersion(transcript: Transcript, turnId: string, key: string, text: string | null): Transcript {
  const at = transcript.turns.findIndex((turn) => turn.id === turnId);
  if (at === -1) return transcript;
  const userText = text ?? transcript.turns[at]?.userText ?? null;
  return { ...transcript, turns: [...transcript.turns.slice(0, at), newTurn(key, null, userText, 'sending')] };
}

/** Where a turn stands among its versions, for the switcher under its reply. */
export interface VersionPlace {
  /** 1-based. */
  readonly index: number;
  readonly count: number;
  readonly previous: string | null;
  readonly next: string | null;
}

/** Where turn `turnId` stands among its versions; `null` when it has no other. */
export function versionPlace(versions: readonly { readonly turn: string; readonly versions: readonly string[] }[], turnId: string | null): VersionPlace | null {
  const entry = versions.find((v) => v.turn === turnId);
  if (!entry || turnId === null || entry.versions.length < 2) return null;
  const at = entry.versions.indexOf(turnId);
  if (at === -1) return null;
  return { index: at + 1, count: entry.versions.length, previous: entry.versions[at - 1] ?? null, next: entry.versions[at + 1] ?? null };
}

/** The server accepted the message: the sending turn gets its id (unless an event gave it already). */
export function acceptSending(transcript: Transcript, key: string, turnId: string): Transcript {
  if (transcript.turns.some((turn) => turn.id === turnId)) {
    return { ...transcript, turns: transcript.turns.filter((turn) => turn.key !== key || turn.id === turnId) };
  }
  return update(transcript, (turn) => turn.key === key, (turn) => ({ ...turn, id: turnId, status: turn.status === 'sending' ? 'running' : turn.status }));
}

/** The message was refused: the turn goes, and its text returns to the composer. */
export function dropSending(transcript: Transcript, key: string): Transcript {
  return { ...transcript, turns: transcript.turns.filter((turn) => turn.key !== key) };
}

/** Applies one live event of this transcript's session. */
export function applyEvent(transcript: Transcript, event: TurnEvent): Applied {
  if (event.session !== transcript.sessionId) return { transcript, reload: false };
  let index = transcript.turns.findIndex((turn) => turn.id === event.turn);
  if (index === -1) {
    if (event.type !== 'turn_started') {
      // A turn we never saw start (another window sent it, or we connected late).
      return { transcript, reload: true };
    }
    // Our own message, whose 202 has not come back yet, or another window's.
    const sending = transcript.turns.findIndex((turn) => turn.id === null && turn.status === 'sending');
    const turns = [...transcript.turns];
    if (sending === -1) {
      turns.push(newTurn(event.turn, event.turn, null, 'running'));
      index = turns.length - 1;
      const applied = applyTo(turns[index], event);
      turns[index] = applied;
      return { transcript: { ...transcript, turns }, reload: true };
    }
    turns[sending] = { ...turns[sending], id: event.turn };
    transcript = { ...transcript, turns };
    index = sending;
  }
  const turn = transcript.turns[index];
  const gap = event.type !== 'turn_started' && event.seq !== turn.seq + 1;
  const turns = [...transcript.turns];
  turns[index] = applyTo(turn, event);
  return { transcript: { ...transcript, turns }, reload: gap };
}

function applyTo(turn: Turn, event: TurnEvent): Turn {
  const seq = event.seq;
  // What a sub-agent says and does inside its frame is not the reply; its
  // answer comes back as the result of the call_agent call. Cards it raises
  // still reach the person through the inbox.
  if (event.frame) return { ...turn, seq };
  switch (event.type) {
    case 'turn_started':
      return { ...turn, status: 'running', model: event.model ?? turn.model, error: null, seq };
    case 'token':
      return { ...turn, items: appendText(turn.items, event.text), seq };
    case 'tool_call_started': {
      const call = event.call;
      if (turn.items.some((item) => item.kind === 'tool' && item.id === call.id)) return { ...turn, seq };
      const item: ToolItem = { kind: 'tool', id: call.id, name: call.name, arguments: call.arguments, status: 'running', result: null };
      return { ...turn, items: [...turn.items, item], seq };
    }
    case 'tool_call_finished':
      return {
        ...turn,
        seq,
        items: turn.items.map((item) =>
          item.kind === 'tool' && item.id === event.call_id
            ? { ...item, status: toolStatus(event.status), result: event.result ?? null }
            : item,
        ),
      };
    case 'tool_progress': {
      const progress: ToolProgress = { progress: event.progress, total: event.total ?? null, message: event.message ?? null };
      return {
        ...turn,
        seq,
        items: turn.items.map((item) => (item.kind === 'tool' && item.id === event.call_id ? { ...item, progress } : item)),
      };
    }
    case 'turn_parked':
      return { ...turn, status: 'parked', seq };
    case 'retrying':
      return { ...turn, seq, items: [...turn.items, { kind: 'note', note: 'retrying', detail: String(event.attempt) }] };
    case 'fallback':
      return { ...turn, seq, model: event.to, items: [...turn.items, { kind: 'note', note: 'fallback', detail: event.to }] };
    case 'compacted':
      return { ...turn, seq, items: [...turn.items, { kind: 'note', note: 'compacted', detail: '' }] };
    case 'error':
      return { ...turn, seq, error: event.error };
    case 'turn_ended': {
      const status = endStatus(event.status) ?? 'done';
      return { ...turn, seq, status, error: event.error ?? (status === 'error' ? turn.error : null) };
    }
    case 'card':
    case 'frame_started':
    case 'frame_ended':
      return { ...turn, seq };
  }
}

/** The turn a reply is being written in, if any. */
export function activeTurn(transcript: Transcript): Turn | undefined {
  return transcript.turns.find((turn) => turn.status === 'sending' || turn.status === 'running');
}

/** The person's last message, for Retry. */
export function lastUserText(transcript: Transcript): string | null {
  for (let i = transcript.turns.length - 1; i >= 0; i--) {
    const text = transcript.turns[i]?.userText;
    if (text) return text;
  }
  return null;
}

/** The model the latest turn used, for the privacy badge before the next one starts. */
export function lastModel(transcript: Transcript): string | null {
  for (let i = transcript.turns.length - 1; i >= 0; i--) {
    const model = transcript.turns[i]?.model;
    if (model) return model;
  }
  return null;
}

function newTurn(key: string, id: string | null, userText: string | null, status: TurnStatus): Turn {
  return { key, id, userText, items: [], status, model: null, error: null, seq: 0 };
}

function appendText(items: readonly TurnItem[], text: string): readonly TurnItem[] {
  const last = items[items.length - 1];
  if (last?.kind === 'text') return [...items.slice(0, -1), { kind: 'text', text: last.text + text }];
  return [...items, { kind: 'text', text }];
}

function endStatus(status: string): TurnStatus | null {
  switch (status) {
    case 'done':
    case 'stopped':
    case 'error':
      return status;
    default:
      return null;
  }
}

function toolStatus(status: string): ToolStatus {
  switch (status) {
    case 'ok':
    case 'error':
    case 'denied':
    case 'cancelled':
      return status;
    default:
      return 'running';
  }
}

function update(transcript: Transcript, match: (turn: Turn) => boolean, change: (turn: Turn) => Turn): Transcript {
  return { ...transcript, turns: transcript.turns.map((turn) => (match(turn) ? change(turn) : turn)) };
}
