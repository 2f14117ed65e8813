/**
 * The application root: the page's heading and the connection status.
 *
 * Owns: asking the server whether it answers (`GET /api/health`) whenever it
 * is given a client, and showing the outcome. Never: reads the token or the
 * URL itself; the client comes down as a property from main.ts.
 */
import { LitElement, html, type PropertyValues, type TemplateResult } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';

import { ApiError, type ApiClient } from '../../api/client.js';
import { strings } from '../../i18n/en.js';
import { styles } from './skald-app.styles.js';

/** What the status line shows; `kind` is also the `data-testid="health"` text. */
type Health =
  | { readonly kind: 'starting' }
  | { readonly kind: 'checking' }
  | { readonly kind: 'no-token' }
  | { readonly kind: 'ok'; readonly version: string }
  | { readonly kind: 'error'; readonly message: string };

/**
 * The Skald application shell.
 *
 * Test hooks, stable across languages: `[data-testid=health]` holds the
 * state code (`starting`, `checking`, `ok`, `no-token` or `error`) and, once
 * the server answered, `[data-testid=version]` holds its version.
 *
 * @summary The application root: heading and connection status.
 */
@customElement('skald-app')
export class SkaldApp extends LitElement {
  static override styles = styles;

  /**
   * The API client built from the launch token: `null` when the page was
   * opened without one, `undefined` until main.ts hands it over.
   */
  @property({ attribute: false })
  client: ApiClient | null | undefined = undefined;

  @state()
  private health: Health = { kind: 'starting' };

  // Cancels the health request in flight when the client changes or the
  // element leaves the page, so a late answer never overwrites a newer one.
  #inFlight: AbortController | null = null;

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('client')) {
      this.#checkHealth();
    }
  }

  override connectedCallback(): void {
    super.connectedCallback();
    // Back on the page after a move in the DOM: ask again.
    if (this.hasUpdated) this.#checkHealth();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#inFlight?.abort();
    this.#inFlight = null;
  }

  #checkHealth(): void {
    this.#inFlight?.abort();
    this.#inFlight = null;
    const client = this.client;
    if (client === undefined) {
      this.health = { kind: 'starting' };
      return;
    }
    if (client === null) {
      this.health = { kind: 'no-token' };
      return;
    }
    const controller = new AbortController();
    this.#inFlight = controller;
    this.health = { kind: 'checking' };
    client.health(controller.signal).then(
      (answer) => {
        if (controller.signal.aborted) return;
        this.health =
          answer.status === 'ok'
            ? { kind: 'ok', version: answer.version }
            : { kind: 'error', message: answer.status };
        if (answer.status === 'ok') {
          // Once painted, say so in the server's log (the desktop smoke test reads it).
          void this.updateComplete.then(() => client.report('rendered').catch(() => undefined));
        }
      },
      (error: unknown) => {
        if (controller.signal.aborted) return;
        this.health = { kind: 'error', message: describeError(error) };
      },
    );
  }

  override render(): TemplateResult {
    return html`
      <main>
        <header>
          <h1>${strings.productName}</h1>
          <p class="tagline">${strings.tagline}</p>
        </header>
        <p class="status" role="status" aria-live="polite">
          <span class="label">${strings.statusLabel}:</span>
          <span class="badge" data-testid="health" data-state=${this.health.kind}>${this.health.kind}</span>
          ${this.#renderDetail()}
        </p>
      </main>
    `;
  }

  #renderDetail(): TemplateResult {
    const health = this.health;
    switch (health.kind) {
      case 'starting':
      case 'checking':
        return html`<span class="message">${strings.checking}</span>`;
      case 'ok':
        return html`
          <span class="message">${strings.connected}</span>
          <span class="version">
            ${strings.versionLabel} <span data-testid="version">${health.version}</span>
          </span>
        `;
      case 'no-token':
        return html`<span class="message" data-testid="message">${fillCommand(strings.noToken)}</span>`;
      case 'error':
        return html`<span class="message" data-testid="message">${health.message}</span>`;
    }
  }
}

/** A person-readable reason; the server's message when it sent one. */
function describeError(error: unknown): string {
  if (error instanceof ApiError) {
    return error.code === 'network'
      ? strings.unreachable
      : strings.serverError.replace('{message}', error.message);
  }
  return strings.unreachable;
}

/** Puts the `skald serve` command, set as code, where `{command}` stands. */
function fillCommand(text: string): TemplateResult {
  const [before = '', after = ''] = text.split('{command}');
  return html`${before}<code>${strings.noTokenCommand}</code>${after}`;
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-app': SkaldApp;
  }
}
