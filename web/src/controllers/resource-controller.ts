/**
 * Reads something for a page while the page is on screen: the value, whether
 * it is loading, why it failed, and a way to read it again. Only the latest
 * read may land; a page that leaves cancels what it was reading.
 *
 *   readonly #notes = new ResourceController(this, (signal) => this.client!.notes(signal));
 *   ${this.#notes.status()}  ${this.#notes.value?.map(…)}
 */
import { html, nothing, type ReactiveController, type ReactiveControllerHost, type TemplateResult } from 'lit';

import { strings } from '../i18n/en.js';
import { describeError } from '../i18n/errors.js';

export class ResourceController<T> implements ReactiveController {
  readonly #host: ReactiveControllerHost;
  readonly #load: (signal: AbortSignal) => Promise<T>;
  #abort: AbortController | null = null;
  #read = 0;

  value: T | undefined = undefined;
  error = '';
  loading = false;

  constructor(host: ReactiveControllerHost, load: (signal: AbortSignal) => Promise<T>) {
    this.#host = host;
    this.#load = load;
    host.addController(this);
  }

  hostConnected(): void {
    // After the first update, so the properties the read needs have arrived.
    if (this.value === undefined) void this.#host.updateComplete.then(() => this.reload());
  }

  hostDisconnected(): void {
    this.#abort?.abort();
    this.#abort = null;
    this.loading = false;
  }

  /** Reads again; the value on screen stays until the new one arrives. */
  async reload(): Promise<void> {
    this.#abort?.abort();
    const abort = new AbortController();
    this.#abort = abort;
    const read = ++this.#read;
    this.loading = true;
    this.#host.requestUpdate();
    try {
      const value = await this.#load(abort.signal);
      if (read !== this.#read) return;
      this.value = value;
      this.error = '';
    } catch (error) {
      if (read !== this.#read || abort.signal.aborted) return;
      this.error = describeError(error);
    } finally {
      if (read === this.#read) {
        this.loading = false;
        this.#host.requestUpdate();
      }
    }
  }

  /** Replaces the value (after a change the page made itself). */
  set(value: T): void {
    this.value = value;
    this.#host.requestUpdate();
  }

  /** "Loading…" before the first value, or the failure with a Retry button. */
  status(): TemplateResult | typeof nothing {
    if (this.error !== '') {
      return html`<div class="notice error" role="alert" data-testid="load-error">
        <p>${this.error}</p>
        <button type="button" @click=${() => void this.reload()}>${strings.retry}</button>
      </div>`;
    }
    if (this.value === undefined) return html`<p class="hint" role="status">${strings.loading}</p>`;
    return nothing;
  }
}
