/**
 * Decides approval cards and answers questions for whichever view shows them
 * (a conversation inline, or the inbox): listens for `skald-decide`,
 * `skald-answer` and `skald-form-reply` on its host, calls the server, and keeps per-card busy and
 * error states for the cards to show.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';

import { ApiError, type ApiClient } from '../api/client.js';
import { describeError } from '../i18n/errors.js';
import type { InboxStore } from '../state/inbox.js';
import type { AnswerEvent, DecideEvent, FormReplyEvent } from '../components/events.js';

type Host = ReactiveControllerHost & HTMLElement;

export class CardActionsController implements ReactiveController {
  readonly #host: Host;
  readonly #client: () => ApiClient | null;
  readonly #inbox: () => InboxStore | null;
  readonly #busy = new Set<string>();
  readonly #errors = new Map<string, string>();

  constructor(host: Host, client: () => ApiClient | null, inbox: () => InboxStore | null) {
    this.#host = host;
    this.#client = client;
    this.#inbox = inbox;
    host.addController(this);
  }

  hostConnected(): void {
    this.#host.addEventListener('skald-decide', this.#onDecide);
    this.#host.addEventListener('skald-answer', this.#onAnswer);
    this.#host.addEventListener('skald-form-reply', this.#onFormReply);
  }

  hostDisconnected(): void {
    this.#host.removeEventListener('skald-decide', this.#onDecide);
    this.#host.removeEventListener('skald-answer', this.#onAnswer);
    this.#host.removeEventListener('skald-form-reply', this.#onFormReply);
  }

  busy(cardId: string): boolean {
    return this.#busy.has(cardId);
  }

  error(cardId: string): string {
    return this.#errors.get(cardId) ?? '';
  }

  readonly #onDecide = (event: DecideEvent): void => {
    event.stopPropagation();
    const { card, decision, always, replace } = event;
    if (card.kind === 'sample') {
      void this.#run(card.id, (client) => client.decideSample(card.id, decision));
      return;
    }
    if (card.kind !== 'approval') return;
    void this.#run(card.id, (client) => client.decide(card.id, decision, card.details.arguments_hash, always, replace));
  };

  readonly #onAnswer = (event: AnswerEvent): void => {
    event.stopPropagation();
    const { card, answer } = event;
    void this.#run(card.id, (client) => client.answer(card.id, answer));
  };

  readonly #onFormReply = (event: FormReplyEvent): void => {
    event.stopPropagation();
    const { card, decision, content } = event;
    void this.#run(card.id, (client) => client.replyToForm(card.id, decision, content ?? undefined));
  };

  async #run(cardId: string, call: (client: ApiClient) => Promise<void>): Promise<void> {
    const client = this.#client();
    if (client === null || this.#busy.has(cardId)) return;
    this.#busy.add(cardId);
    this.#errors.delete(cardId);
    this.#host.requestUpdate();
    try {
      await call(client);
      this.#inbox()?.remove(cardId);
    } catch (error) {
      // Decided elsewhere (another window) or changed: read the inbox again.
      if (error instanceof ApiError && (error.code === 'already_decided' || error.code === 'card_changed' || error.code === 'no_card')) {
        void this.#inbox()?.refresh().catch(() => undefined);
      }
      this.#errors.set(cardId, describeError(error));
    } finally {
      this.#busy.delete(cardId);
      this.#host.requestUpdate();
    }
  }
}
