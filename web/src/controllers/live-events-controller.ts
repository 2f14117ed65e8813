/**
 * Hands a component the live events of the current login while it is on the
 * page: `onEvent` for each event, `onResync` when the socket reconnected or
 * fell behind (what the component shows should be read again).
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';

import type { LiveEvent } from '../api/types.js';
import type { LiveConnection, LiveEventMessage } from '../state/live.js';

export interface LiveHandlers {
  readonly onEvent: (event: LiveEvent) => void;
  readonly onResync?: () => void;
}

export class LiveEventsController implements ReactiveController {
  readonly #live: () => LiveConnection | null;
  readonly #handlers: LiveHandlers;
  #subscribed: LiveConnection | null = null;

  readonly #onEvent = (message: Event): void => this.#handlers.onEvent((message as LiveEventMessage).event);
  readonly #onResync = (): void => this.#handlers.onResync?.();

  constructor(host: ReactiveControllerHost, live: () => LiveConnection | null, handlers: LiveHandlers) {
    this.#live = live;
    this.#handlers = handlers;
    host.addController(this);
  }

  hostConnected(): void {
    this.follow();
  }

  hostUpdate(): void {
    this.follow();
  }

  hostDisconnected(): void {
    this.#unsubscribe();
  }

  /** Listens to the connection `live` gives now, if it changed since the last look. */
  follow(): void {
    const live = this.#live();
    if (live === this.#subscribed) return;
    this.#unsubscribe();
    live?.addEventListener('live-event', this.#onEvent);
    live?.addEventListener('resync', this.#onResync);
    this.#subscribed = live;
  }

  #unsubscribe(): void {
    this.#subscribed?.removeEventListener('live-event', this.#onEvent);
    this.#subscribed?.removeEventListener('resync', this.#onResync);
    this.#subscribed = null;
  }
}
