/**
 * Follows the built-in model's downloads for a component while it is on the
 * page: from the `local_model_download` events of the live socket, and, when
 * no event has come for a second while a download is moving, from
 * `GET /api/local-models/downloads` once a second instead.
 *
 * Where the page has no live socket yet (the setup wizard, before the app's
 * login exists) it opens one of its own for as long as a download moves.
 *
 *   readonly #downloads = new LocalDownloadsController(this, () => this.client, () => this.live, {
 *     onDone: (download) => …,
 *   });
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';

import type { ApiClient } from '../api/client.js';
import type { DownloadStatus, LiveEvent } from '../api/types.js';
import { isActive } from '../state/local-models.js';
import { LiveConnection } from '../state/live.js';
import { LiveEventsController } from './live-events-controller.js';

/** How long without an event before the list is read instead, and how often. */
const POLL_MS = 1000;

export interface DownloadHandlers {
  /** A download that was moving while watched has become a model. */
  readonly onDone?: (download: DownloadStatus) => void;
}

export class LocalDownloadsController implements ReactiveController {
  readonly #host: ReactiveControllerHost;
  readonly #client: () => ApiClient | null;
  readonly #live: () => LiveConnection | null;
  readonly #handlers: DownloadHandlers;

  /** Every download known, by id. */
  downloads: ReadonlyMap<string, DownloadStatus> = new Map();

  /** The live socket's events: the page's own, or the one opened here. */
  readonly #events: LiveEventsController;
  /** The socket this controller opened itself, when the page had none. */
  #own: LiveConnection | null = null;
  #timer: ReturnType<typeof setInterval> | undefined;
  #lastEvent = 0;
  /** Downloads whose end was already reported, so a late answer never reports it twice. */
  readonly #notified = new Set<string>();
  #polling = false;
  #connected = false;

  constructor(
    host: ReactiveControllerHost,
    client: () => ApiClient | null,
    live: () => LiveConnection | null,
    handlers: DownloadHandlers = {},
  ) {
    this.#host = host;
    this.#client = client;
    this.#live = live;
    this.#handlers = handlers;
    this.#events = new LiveEventsController(host, () => this.#live() ?? this.#own, {
      onEvent: (event) => this.#event(event),
      onResync: () => void this.refresh(),
    });
    host.addController(this);
  }

  hostConnected(): void {
    this.#connected = true;
    // After the first update, so the client has arrived.
    void this.#host.updateComplete.then(() => this.refresh());
  }

  hostDisconnected(): void {
    this.#connected = false;
    this.#stopWatching();
  }

  /** Reads every download again (on arrival, after a socket gap, after starting one). */
  async refresh(): Promise<void> {
    const client = this.#client();
    if (client === null || this.#polling) return;
    this.#polling = true;
    try {
      const list = await client.downloads();
      for (const download of list) this.#put(download, true);
    } catch {
      // The next tick tries again; what is shown stays.
    } finally {
      this.#polling = false;
    }
  }

  /**
   * A download was just started here: watch it, shown as `placeholder` until
   * the server's first word. `since` is what was known of it before asking:
   * if an event came while the request was answered, that event stands.
   */
  started(placeholder: DownloadStatus, since: DownloadStatus | undefined): void {
    this.#lastEvent = Date.now();
    const now = this.downloads.get(placeholder.id);
    if (now === undefined || now === since) {
      this.#put(placeholder, false);
      return;
    }
    // This run has already moved on, perhaps to its end, before its "started" was seen.
    if (now.state === 'done' && !this.#notified.has(now.id)) {
      this.#notified.add(now.id);
      this.#handlers.onDone?.(now);
    }
    this.#updateWatching();
  }

  #event(event: LiveEvent): void {
    if (event.type !== 'local_model_download') return;
    this.#lastEvent = Date.now();
    this.#put(event.download, false);
  }

  /**
   * Events arrive in order; a poll's answer may be older than the last event,
   * so it never takes an ended download back to moving (a new attempt comes
   * through `started` or an event).
   */
  #put(download: DownloadStatus, fromPoll: boolean): void {
    const before = this.downloads.get(download.id);
    if (fromPoll && before !== undefined && isActive(download) && (!isActive(before) || download.received < before.received)) return;
    const next = new Map(this.downloads);
    next.set(download.id, download);
    this.downloads = next;
    // Moving again: a new run, whose end is yet to be reported.
    if (download.state !== 'done') this.#notified.delete(download.id);
    if (download.state === 'done' && before !== undefined && isActive(before) && !this.#notified.has(download.id)) {
      this.#notified.add(download.id);
      this.#handlers.onDone?.(download);
    }
    this.#updateWatching();
    this.#host.requestUpdate();
  }

  #updateWatching(): void {
    const moving = [...this.downloads.values()].some(isActive);
    if (moving && this.#connected) this.#startWatching();
    else this.#stopWatching();
  }

  #startWatching(): void {
    if (this.#live() === null && this.#own === null) {
      const client = this.#client();
      if (client !== null) {
        this.#own = new LiveConnection(client);
        this.#own.open();
        this.#events.follow();
      }
    }
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => {
      if (Date.now() - this.#lastEvent >= POLL_MS) void this.refresh();
    }, POLL_MS);
  }

  #stopWatching(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#own !== null) {
      const own = this.#own;
      this.#own = null;
      // Back to the page's socket, if any; none to follow once off the page.
      if (this.#connected) this.#events.follow();
      own.close();
    }
  }
}
