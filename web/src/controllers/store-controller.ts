/**
 * Re-renders a component whenever a store it reads says it changed.
 *
 * A store is any EventTarget that dispatches `change` (InboxStore, …). The
 * controller subscribes while the host is on the page and unsubscribes when
 * it leaves, so a component only declares what it reads:
 *
 *   #inbox = new StoreController(this, () => this.inbox);
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';

export class StoreController<T extends EventTarget> implements ReactiveController {
  readonly #host: ReactiveControllerHost;
  readonly #store: () => T | null | undefined;
  #subscribed: T | null = null;
  readonly #onChange = (): void => this.#host.requestUpdate();

  constructor(host: ReactiveControllerHost, store: () => T | null | undefined) {
    this.#host = host;
    this.#store = store;
    host.addController(this);
  }

  hostConnected(): void {
    this.#resubscribe();
  }

  /** The store may be handed down later as a property: follow it. */
  hostUpdate(): void {
    this.#resubscribe();
  }

  hostDisconnected(): void {
    this.#subscribed?.removeEventListener('change', this.#onChange);
    this.#subscribed = null;
  }

  #resubscribe(): void {
    const store = this.#store() ?? null;
    if (store === this.#subscribed) return;
    this.#subscribed?.removeEventListener('change', this.#onChange);
    store?.addEventListener('change', this.#onChange);
    this.#subscribed = store;
  }
}
