/**
 * The live-event socket of one login (`/api/ws`, blueprint §8.1).
 *
 * Owns: opening the socket with the session bearer, reading its events,
 * reconnecting after a drop, and telling apart the one close that means
 * "locked" (code 4001: tray Lock, idle timeout, Lock in another window).
 * Never: reads or writes anything but the socket; it only reports.
 *
 * Dispatches:
 * - `live-event` (LiveEventMessage): each event, in order;
 * - `resync`: the socket reconnected or fell behind, so what was shown may
 *   have missed events and should be read again;
 * - `locked`: the session ended; the page returns to the picker;
 * - `connection`: `connected` changed.
 */
import type { ApiClient } from '../api/client.js';
import { isLiveEvent, type LiveEvent } from '../api/types.js';

/** The close code the server sends when the session locks. */
export const CLOSE_LOCKED = 4001;
/** Longer than this without a word (the server beats every 15 s): the socket is presumed dead. */
const SILENCE_LIMIT_MS = 40_000;
const RETRY_DELAYS_MS = [500, 1000, 2000, 5000, 10_000] as const;

export class LiveEventMessage extends Event {
  constructor(readonly event: LiveEvent) {
    super('live-event');
  }
}

export class LiveConnection extends EventTarget {
  readonly #client: ApiClient;
  #socket: WebSocket | null = null;
  #attempt = 0;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #silenceTimer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  #connected = false;
  #everConnected = false;

  constructor(client: ApiClient) {
    super();
    this.#client = client;
  }

  get connected(): boolean {
    return this.#connected;
  }

  open(): void {
    if (this.#closed || this.#socket !== null) return;
    const socket = this.#client.openLiveSocket();
    this.#socket = socket;
    socket.addEventListener('open', () => {
      this.#attempt = 0;
      this.#setConnected(true);
      this.#watchSilence();
      if (this.#everConnected) this.dispatchEvent(new Event('resync'));
      this.#everConnected = true;
    });
    socket.addEventListener('message', (message: MessageEvent<unknown>) => {
      this.#watchSilence();
      if (typeof message.data !== 'string') return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(message.data);
      } catch {
        return;
      }
      if (!isLiveEvent(parsed)) return;
      if (parsed.type === 'lagged') {
        this.dispatchEvent(new Event('resync'));
        return;
      }
      this.dispatchEvent(new LiveEventMessage(parsed));
    });
    socket.addEventListener('close', (close: CloseEvent) => {
      this.#socket = null;
      clearTimeout(this.#silenceTimer);
      this.#setConnected(false);
      if (this.#closed) return;
      if (close.code === CLOSE_LOCKED) {
        this.#closed = true;
        this.dispatchEvent(new Event('locked'));
        return;
      }
      this.#scheduleRetry();
    });
  }

  /** Closes for good (logout, lock from this page, or the page leaving). */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    clearTimeout(this.#silenceTimer);
    const socket = this.#socket;
    this.#socket = null;
    if (socket !== null && socket.readyState <= WebSocket.OPEN) socket.close(1000, 'bye');
    this.#setConnected(false);
  }

  #scheduleRetry(): void {
    const delay = RETRY_DELAYS_MS[Math.min(this.#attempt, RETRY_DELAYS_MS.length - 1)] ?? 10_000;
    this.#attempt += 1;
    clearTimeout(this.#retryTimer);
    this.#retryTimer = setTimeout(() => this.open(), delay);
  }

  #watchSilence(): void {
    clearTimeout(this.#silenceTimer);
    this.#silenceTimer = setTimeout(() => this.#socket?.close(4000, 'silent'), SILENCE_LIMIT_MS);
  }

  #setConnected(connected: boolean): void {
    if (this.#connected === connected) return;
    this.#connected = connected;
    this.dispatchEvent(new Event('connection'));
  }
}
