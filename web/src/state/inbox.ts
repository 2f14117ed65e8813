/**
 * What waits on the logged-in person: approval cards and questions, kept
 * current from `GET /api/inbox` and the live `card` / `card_decided` events.
 * One store per login, shared by the navigation's count, the inbox page and
 * the cards shown inline in a conversation. It also keeps, for this login, the
 * cards someone else decided for the person (their supervisor, §6.2), so that the
 * conversation can say who allowed or denied the call.
 *
 * Dispatches `change` whenever the list changes; components subscribe through
 * StoreController.
 */
import type { ApiClient } from '../api/client.js';
import type { Card, LiveEvent } from '../api/types.js';

export class InboxStore extends EventTarget {
  #cards: readonly Card[] = [];
  /** Cards decided by someone else during this login, by their call's id. */
  readonly #decidedByOthers = new Map<string, Card>();
  #loaded = false;
  readonly #client: ApiClient;
  #refreshing: Promise<void> | null = null;

  constructor(client: ApiClient) {
    super();
    this.#client = client;
  }

  /** Pending cards, oldest first. */
  get cards(): readonly Card[] {
    return this.#cards;
  }

  get loaded(): boolean {
    return this.#loaded;
  }

  /** The pending card for a tool call, if one waits. */
  forCall(callId: string): Card | undefined {
    return this.#cards.find((card) => card.details.call_id === callId);
  }

  /** The card someone else (a supervisor) decided for a tool call during this login, if any. */
  decidedFor(callId: string): Card | undefined {
    return this.#decidedByOthers.get(callId);
  }

  /** Pending cards of one conversation. */
  forSession(sessionId: string): readonly Card[] {
    return this.#cards.filter((card) => card.session_id === sessionId);
  }

  /** Reads the inbox again; concurrent calls share one request. */
  refresh(): Promise<void> {
    this.#refreshing ??= this.#client
      .inbox()
      .then((cards) => {
        this.#cards = cards.filter((card) => card.state === 'pending');
        this.#loaded = true;
        this.#changed();
      })
      .finally(() => {
        this.#refreshing = null;
      });
    return this.#refreshing;
  }

  /** Takes a live event into account. */
  apply(event: LiveEvent): void {
    switch (event.type) {
      case 'card':
        if (event.card.state === 'pending') this.#put(event.card);
        break;
      case 'card_decided': {
        const callId = event.card.kind === 'approval' ? event.card.details.call_id : undefined;
        if (event.card.decided_by !== undefined && callId !== undefined) {
          this.#decidedByOthers.set(callId, event.card);
          this.#changed();
        }
        this.remove(event.card.id);
        break;
      }
      case 'turn_ended':
        // Stopping or writing on in a parked conversation withdraws its cards.
        if (this.#cards.some((card) => card.session_id === event.session)) void this.refresh().catch(() => undefined);
        break;
      default:
        break;
    }
  }

  /** Drops a card once decided here, before the server's event arrives. */
  remove(id: string): void {
    if (!this.#cards.some((card) => card.id === id)) return;
    this.#cards = this.#cards.filter((card) => card.id !== id);
    this.#changed();
  }

  #put(card: Card): void {
    const others = this.#cards.filter((c) => c.id !== card.id);
    this.#cards = [...others, card];
    this.#changed();
  }

  #changed(): void {
    this.dispatchEvent(new Event('change'));
  }
}
