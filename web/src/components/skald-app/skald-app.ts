/**
 * The application root: which screen the page shows, and the one login.
 *
 * Owns: checking the server answers (`GET /api/health`), then whether setup
 * is needed; the move from the picker (or setup) to the logged-in workspace
 * and back when the session locks — Lock here (after the workspace has deleted
 * its temporary chat), the tray's Lock (the socket closes with 4001), the idle timeout; and
 * from one session to the next when the person's space gets a new key (the new recovery
 * code shown once in between). Forwards the tray's "New chat"
 * (`skald-new-chat` on window). Without a launch token (a reload forgets it),
 * says how to get back in and takes a pasted launch address. Never: reads the
 * URL itself (the launch client comes down from main.ts), or keeps a token
 * anywhere but in memory.
 */
import { LitElement, html, nothing, type PropertyValues, type TemplateResult } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';

import { ApiClient, ApiError } from '../../api/client.js';
import type { Unlocked } from '../../api/types.js';
import { LocaleController } from '../../controllers/locale-controller.js';
import { strings } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import { endLogin, startLogin, type Login } from '../../state/login.js';
import { splitLaunchFragment } from '../../state/token.js';
import { controls, screen } from '../../styles/controls.js';
import { SignedInEvent, type KeyRotatedEvent } from '../events.js';
import '../skald-login/skald-login.js';
import '../skald-recovery-code/skald-recovery-code.js';
import '../skald-setup/skald-setup.js';
import '../skald-workspace/skald-workspace.js';
import { styles } from './skald-app.styles.js';

/** What the page shows. `kind` is also the `data-testid="health"` state for the connection screens. */
type Screen =
  | { readonly kind: 'starting' }
  | { readonly kind: 'checking' }
  | { readonly kind: 'no-token'; readonly error?: string }
  | { readonly kind: 'error'; readonly message: string }
  | { readonly kind: 'setup'; readonly version: string }
  | { readonly kind: 'picker'; readonly version: string; readonly notice: string }
  | { readonly kind: 'opening'; readonly version: string }
  | { readonly kind: 'new-key'; readonly version: string; readonly unlocked: Unlocked }
  | { readonly kind: 'signed-in'; readonly version: string; readonly login: Login };

/** The window event the desktop shell's tray sends for "New chat". */
export const TRAY_NEW_CHAT = 'skald-new-chat';

/**
 * Test hooks, stable across languages: `[data-testid=health]` has
 * `data-state` `starting`, `checking`, `ok`, `no-token` or `error`; once the
 * server answered, `[data-testid=version]` holds its version and
 * `[data-testid=screen]` says which screen is up (`setup`, `picker`,
 * `new-key` — the recovery code after the space's key was replaced — and `workspace`).
 *
 * @summary The application root: connection, setup or picker, then the workspace.
 */
@customElement('skald-app')
export class SkaldApp extends LitElement {
  static override styles = [controls, screen, styles];

  /**
   * The API client built from the launch token: `null` when the page was
   * opened without one, `undefined` until main.ts hands it over.
   */
  @property({ attribute: false })
  client: ApiClient | null | undefined = undefined;

  @state() private screen: Screen = { kind: 'starting' };
  @state() private newChatRequests = 0;

  // Cancels the check in flight when the client changes or the element
  // leaves the page, so a late answer never overwrites a newer one.
  #inFlight: AbortController | null = null;
  #reported = false;
  /** The client came from an address pasted on the no-token screen (a refusal goes back there). */
  #pasted = false;
  /** "New chat" asked for before anyone logged in: honoured after login. */
  #newChatPending = false;

  constructor() {
    super();
    // Every element under the root renders again when the language changes.
    new LocaleController(this);
  }

  readonly #onTrayNewChat = (): void => {
    if (this.screen.kind === 'signed-in') this.newChatRequests += 1;
    else this.#newChatPending = true;
  };

  readonly #onLocked = (): void => {
    const screen = this.screen;
    const rekeying = screen.kind === 'signed-in' ? screen.login.rekeying : null;
    if (screen.kind === 'signed-in' && rekeying !== null) {
      // The key is being replaced: this is the end of every old session, and the answer
      // holds the new one (or, if the replacement failed, the lock stands).
      const login = screen.login;
      void rekeying.then((unlocked) => {
        if (unlocked === null) this.#returnToPicker(strings.lockedNotice, login);
        else this.#rekeyed(login, unlocked);
      });
      return;
    }
    this.#returnToPicker(screen.kind === 'signed-in' ? (screen.login.farewell ?? strings.lockedNotice) : strings.lockedNotice);
  };

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('client')) this.#check();
  }

  override connectedCallback(): void {
    super.connectedCallback();
    window.addEventListener(TRAY_NEW_CHAT, this.#onTrayNewChat);
    // Back on the page after a move in the DOM: ask again.
    if (this.hasUpdated) this.#check();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    window.removeEventListener(TRAY_NEW_CHAT, this.#onTrayNewChat);
    this.#inFlight?.abort();
    this.#inFlight = null;
  }

  protected override updated(): void {
    const kind = this.screen.kind;
    if (!this.#reported && (kind === 'picker' || kind === 'setup') && this.client) {
      // Once painted, say so in the server's log (the desktop smoke test reads it).
      this.#reported = true;
      const client = this.client;
      void this.updateComplete.then(() => client.report('rendered').catch(() => undefined));
    }
  }

  #check(): void {
    this.#inFlight?.abort();
    this.#inFlight = null;
    const client = this.client;
    if (client === undefined) {
      this.screen = { kind: 'starting' };
      return;
    }
    if (client === null) {
      this.screen = { kind: 'no-token' };
      return;
    }
    const controller = new AbortController();
    this.#inFlight = controller;
    this.screen = { kind: 'checking' };
    const check = async (): Promise<Screen> => {
      const health = await client.health(controller.signal);
      if (health.status !== 'ok') return { kind: 'error', message: health.status };
      const instance = await client.instance(controller.signal);
      return instance.setup_required
        ? { kind: 'setup', version: health.version }
        : { kind: 'picker', version: health.version, notice: '' };
    };
    check().then(
      (screen) => {
        if (!controller.signal.aborted) this.screen = screen;
      },
      (error: unknown) => {
        if (controller.signal.aborted) return;
        if (this.#pasted && error instanceof ApiError && error.status === 401) {
          this.screen = { kind: 'no-token', error: strings.noTokenStale };
          return;
        }
        this.screen = { kind: 'error', message: connectionError(error) };
      },
    );
  }

  async #signedIn(event: SignedInEvent): Promise<void> {
    const client = this.client;
    if (!client) return;
    const version = 'version' in this.screen ? this.screen.version : '';
    this.screen = { kind: 'opening', version };
    try {
      const login = await startLogin(client, event.unlocked);
      login.live.addEventListener('locked', this.#onLocked);
      this.screen = { kind: 'signed-in', version, login };
      if (this.#newChatPending) {
        this.#newChatPending = false;
        this.newChatRequests += 1;
      }
    } catch (error) {
      this.screen = { kind: 'picker', version, notice: describeError(error) };
    }
  }

  async #lock(): Promise<void> {
    const screen = this.screen;
    if (screen.kind !== 'signed-in') return;
    // Locking leaves a temporary chat: the page deletes it while the session still opens it.
    await this.renderRoot.querySelector('skald-workspace')?.leaveTemporaryChat();
    try {
      await screen.login.client.lock();
    } catch (error) {
      // Already locked (401) is what we wanted; anything else, say so but leave anyway:
      // this window forgets the session whatever the server answered.
      if (!(error instanceof ApiError && error.status === 401)) {
        this.#returnToPicker(describeError(error));
        return;
      }
    }
    this.#returnToPicker(strings.lockedNotice);
  }

  /**
   * The space has a new key: the old login is over (its socket, its timers), the new
   * recovery code is shown once, and the new session opens on the page that was open.
   * Reached from the page that asked (`KeyRotatedEvent`) or from the lock it caused,
   * whichever comes first; the second finds this login gone.
   */
  #rekeyed(login: Login, unlocked: Unlocked): void {
    const screen = this.screen;
    if (screen.kind !== 'signed-in' || screen.login !== login) return;
    login.live.removeEventListener('locked', this.#onLocked);
    endLogin(login, { handingOver: true });
    this.screen = { kind: 'new-key', version: screen.version, unlocked };
  }

  /** Back to the picker with `notice`; only from `login` when one is named (a late answer finds another). */
  #returnToPicker(notice: string, login?: Login): void {
    const screen = this.screen;
    if (screen.kind !== 'signed-in') return;
    if (login !== undefined && screen.login !== login) return;
    screen.login.live.removeEventListener('locked', this.#onLocked);
    endLogin(screen.login);
    // The next person starts at the conversation, not on the page the last one left open.
    if (window.location.hash !== '') {
      window.history.replaceState(null, '', `${window.location.pathname}${window.location.search}`);
    }
    this.screen = { kind: 'picker', version: screen.version, notice };
  }

  override render(): TemplateResult {
    const screen = this.screen;
    switch (screen.kind) {
      case 'starting':
      case 'checking':
        return this.#renderStatus(html`<p class="lead" role="status">${strings.checking}</p>`);
      case 'no-token':
        return this.#renderStatus(this.#renderNoToken(screen.error));
      case 'error':
        return this.#renderStatus(html`
          <p class="notice error" role="alert" data-testid="message">${screen.message}</p>
          <div class="actions"><button type="button" @click=${() => this.#check()}>${strings.retry}</button></div>
        `);
      case 'setup':
        return html`<div class="app" data-testid="screen" data-screen="setup">
          <main>
            <skald-setup .client=${this.client ?? null} @skald-signed-in=${(e: SignedInEvent) => void this.#signedIn(e)}></skald-setup>
          </main>
          ${this.#footer(screen.version)}
        </div>`;
      case 'picker':
        return html`<div class="app" data-testid="screen" data-screen="picker">
          <main>
            <skald-login
              .client=${this.client ?? null}
              .notice=${screen.notice}
              @skald-signed-in=${(e: SignedInEvent) => void this.#signedIn(e)}
            ></skald-login>
          </main>
          ${this.#footer(screen.version)}
        </div>`;
      case 'opening':
        return this.#renderStatus(html`<p class="lead" role="status">${strings.opening}</p>`);
      case 'new-key': {
        const unlocked = screen.unlocked;
        return html`<div class="app" data-testid="screen" data-screen="new-key">
          <main>
            <skald-recovery-code
              .code=${unlocked.recovery_code ?? ''}
              .name=${unlocked.user.name}
              reason="rotate"
              @skald-recovery-code-kept=${() => void this.#signedIn(new SignedInEvent(unlocked))}
            ></skald-recovery-code>
          </main>
          ${this.#footer(screen.version)}
        </div>`;
      }
      case 'signed-in':
        return html`<skald-workspace
          data-testid="screen"
          data-screen="workspace"
          .login=${screen.login}
          .newChatRequests=${this.newChatRequests}
          @skald-lock=${() => void this.#lock()}
          @skald-account-deleted=${() => this.#returnToPicker(strings.accountDeletedNotice)}
          @skald-key-rotated=${(e: KeyRotatedEvent) => this.#rekeyed(screen.login, e.unlocked)}
        ></skald-workspace>`;
    }
  }

  /**
   * The way back in when the page has no launch token (a reload forgets it: it is kept in
   * memory only): the tray's Open, or the address `skald serve` printed, which works until
   * Skald restarts and can be pasted here.
   */
  #renderNoToken(error: string | undefined): TemplateResult {
    return html`
      <p class="lead" data-testid="message">${strings.noToken}</p>
      <ul class="ways">
        <li>${strings.noTokenDesktop}</li>
        <li>${fillCommand(strings.noTokenServe)}</li>
      </ul>
      <form class="paste" data-testid="launch-form" @submit=${this.#openPasted} novalidate>
        <label for="launch-address">${fillCommand(strings.noTokenPasteLabel)}</label>
        <div class="paste-row">
          <input id="launch-address" name="address" type="text" autocomplete="off" spellcheck="false" aria-describedby=${error ? 'launch-error' : nothing} />
          <button type="submit" class="primary">${strings.noTokenOpen}</button>
        </div>
        ${error ? html`<p class="notice error" role="alert" id="launch-error" data-testid="launch-error">${error}</p>` : nothing}
      </form>
    `;
  }

  #openPasted(event: Event): void {
    event.preventDefault();
    const address = new FormData(event.target as HTMLFormElement).get('address');
    const token = launchTokenIn(typeof address === 'string' ? address : '');
    if (token === null) {
      this.screen = { kind: 'no-token', error: strings.noTokenNotAddress };
      return;
    }
    this.#pasted = true;
    this.client = new ApiClient(token);
  }

  #renderStatus(body: TemplateResult): TemplateResult {
    const state = this.screen.kind;
    return html`<main class="screen">
      <section class="panel">
        <h1>${strings.productName}</h1>
        <p class="tagline">${strings.tagline}</p>
        <p class="visually-hidden" data-testid="health" data-state=${state}>${state}</p>
        ${body}
      </section>
    </main>`;
  }

  /** The connection line under the pre-login screens. */
  #footer(version: string): TemplateResult {
    return html`<footer class="footer">
      <span data-testid="health" data-state="ok">${strings.connected}</span>
      <span>${strings.versionLabel} <span data-testid="version">${version}</span></span>
    </footer>`;
  }
}

/** A person-readable reason the server could not be used. */
function connectionError(error: unknown): string {
  if (error instanceof ApiError && error.code !== 'network') {
    return strings.serverError.replace('{message}', describeError(error));
  }
  return strings.unreachable;
}

/** The token in a pasted launch address (`http://127.0.0.1:PORT/#token=T`), or `null`. */
function launchTokenIn(address: string): string | null {
  const hash = address.trim().split('#')[1];
  return hash === undefined ? null : splitLaunchFragment(`#${hash}`).token;
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
