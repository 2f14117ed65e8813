/**
 * One action at a time on an administration page: whether one is running, and
 * what went wrong with the last one, told in the person's words. Each page says
 * what follows a success (read the page again, announce it) and, if anything,
 * a failure.
 *
 *   readonly #action = new ActionController(this);
 *   await this.#action.run(() => client.deleteRole(id), { done: () => this.#roles.reload() });
 */
import type { ReactiveControllerHost } from 'lit';

import { describeError } from '../i18n/errors.js';

export interface ActionFollowUp {
  readonly done: () => Promise<void> | void;
  readonly failed?: () => Promise<void> | void;
}

/** Needs no part in the host's lifecycle: it only asks the host to render again. */
export class ActionController {
  readonly #host: ReactiveControllerHost;
  #busy = false;
  #error = '';

  constructor(host: ReactiveControllerHost) {
    this.#host = host;
  }

  get busy(): boolean {
    return this.#busy;
  }

  get error(): string {
    return this.#error;
  }

  set error(message: string) {
    this.#error = message;
    this.#host.requestUpdate();
  }

  /** Runs `call` unless another action runs; true when it and `done` succeeded. */
  async run(call: () => Promise<unknown>, then: ActionFollowUp): Promise<boolean> {
    const ok = await this.hold(async () => {
      this.error = '';
      try {
        await call();
        await then.done();
        return true;
      } catch (error) {
        this.error = describeError(error);
        await then.failed?.();
        return false;
      }
    });
    return ok ?? false;
  }

  /**
   * Runs `work` as the page's one action, which tells its own outcome; nothing
   * (`undefined`) while another runs.
   */
  async hold<T>(work: () => Promise<T>): Promise<T | undefined> {
    if (this.#busy) return undefined;
    this.#busy = true;
    this.#host.requestUpdate();
    try {
      return await work();
    } finally {
      this.#busy = false;
      this.#host.requestUpdate();
    }
  }
}
