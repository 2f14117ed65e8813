/**
 * Skald once a person is logged in: the navigation (conversations, the
 * inbox with its count, who is logged in, Lock) beside the open view (a
 * conversation or the inbox).
 *
 * Owns: the conversation list and the model list of this login, which view
 * is open, and the calls that change the list (rename, delete). Never: talks
 * to the socket itself (the login's LiveConnection does) or locks by itself
 * (it asks the app with `skald-lock`).
 */
import { LitElement, html, nothing, type PropertyValues, type TemplateResult } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';

import type { ChatSession, LiveEvent, Model } from '../../api/types.js';
import { LiveEventsController } from '../../controllers/live-events-controller.js';
import { StoreController } from '../../controllers/store-controller.js';
import { strings } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import type { Login } from '../../state/login.js';
import { controls } from '../../styles/controls.js';
import type { NewChatEvent, OpenSessionEvent, SessionChangedEvent } from '../events.js';
import { inboxIcon, lockIcon, menuIcon } from '../icons.js';
import '../skald-avatar/skald-avatar.js';
import type { SkaldChat } from '../skald-chat/skald-chat.js';
import '../skald-chat/skald-chat.js';
import '../skald-inbox/skald-inbox.js';
import '../skald-session-list/skald-session-list.js';
import type { DeleteSessionEvent, RenameSessionEvent } from '../skald-session-list/skald-session-list.js';
import '../skald-toasts/skald-toasts.js';
import type { DismissToastEvent, Toast } from '../skald-toasts/skald-toasts.js';
import { styles } from './skald-workspace.styles.js';

/** The person asked to lock. */
export class LockEvent extends Event {
  static readonly type = 'skald-lock';
  constructor() {
    super(LockEvent.type, { bubbles: true, composed: true });
  }
}

type View = { readonly kind: 'chat'; readonly sessionId: string | null } | { readonly kind: 'inbox' };

const TOAST_MS = 8000;

/**
 * Test hooks: `[data-testid=nav-inbox]` (its `[data-testid=inbox-count]`),
 * `[data-testid=lock]`, `[data-testid=me]`.
 *
 * @summary The logged-in layout: navigation and the open view.
 * @fires skald-lock - the person pressed Lock
 */
@customElement('skald-workspace')
export class SkaldWorkspace extends LitElement {
  static override styles = [controls, styles];

  @property({ attribute: false }) login: Login | null = null;
  /** Counts "New chat" requests from outside (the tray); each increase opens one. */
  @property({ type: Number }) newChatRequests = 0;

  @state() private sessions: readonly ChatSession[] = [];
  @state() private sessionsLoading = true;
  @state() private models: readonly Model[] = [];
  @state() private modelsLoaded = false;
  @state() private view: View = { kind: 'chat', sessionId: null };
  @state() private navOpen = false;
  @state() private toasts: readonly Toast[] = [];

  @query('skald-chat') private chat?: SkaldChat;

  #toastId = 0;
  #listRead = 0;
  #alive = new AbortController();
  #listTimer: ReturnType<typeof setTimeout> | undefined;

  constructor() {
    super();
    new StoreController(this, () => this.login?.inbox);
    new LiveEventsController(this, () => this.login?.live ?? null, {
      onEvent: (event) => this.#onLive(event),
      onResync: () => void this.#loadSessions(),
    });
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('login') && this.login) {
      void this.#loadSessions();
      void this.#loadModels();
    }
    if (changed.has('newChatRequests') && changed.get('newChatRequests') !== undefined) this.#newChat();
  }

  protected override firstUpdated(): void {
    this.chat?.focus();
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.#alive = new AbortController();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearTimeout(this.#listTimer);
    this.#alive.abort();
  }

  async #loadSessions(): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    // Only the latest read may land: an older answer would show older states.
    const read = ++this.#listRead;
    try {
      const sessions = await client.sessions(this.#alive.signal);
      if (read === this.#listRead) this.sessions = sessions;
    } catch (error) {
      if (this.#alive.signal.aborted) return;
      this.#toast(strings.sessionsFailed, describeError(error), 'error');
    } finally {
      this.sessionsLoading = false;
    }
  }

  #loadSessionsSoon(): void {
    clearTimeout(this.#listTimer);
    this.#listTimer = setTimeout(() => void this.#loadSessions(), 200);
  }

  async #loadModels(): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    try {
      this.models = await client.models(this.#alive.signal);
    } catch (error) {
      if (this.#alive.signal.aborted) return;
      this.#toast(strings.modelsFailed, describeError(error), 'error');
    } finally {
      this.modelsLoaded = true;
    }
  }

  #onLive(event: LiveEvent): void {
    switch (event.type) {
      case 'turn_started':
        this.#setTurnState(event.session, 'running');
        break;
      case 'turn_parked':
        this.#setTurnState(event.session, 'parked');
        break;
      case 'turn_ended':
        this.#setTurnState(event.session, event.status);
        break;
      case 'notify':
        this.#toast(event.title, event.body, 'info');
        break;
      default:
        break;
    }
  }

  /** Shows a conversation's new state at once, then reads the list again to be sure. */
  #setTurnState(sessionId: string, state: string): void {
    this.sessions = this.sessions.map((s) => (s.id === sessionId ? { ...s, turn_state: state } : s));
    this.#loadSessionsSoon();
  }

  #toast(title: string, body: string, kind: Toast['kind']): void {
    const id = ++this.#toastId;
    this.toasts = [...this.toasts.slice(-3), { id, title, body, kind }];
    setTimeout(() => (this.toasts = this.toasts.filter((t) => t.id !== id)), TOAST_MS);
  }

  #newChat(): void {
    this.view = { kind: 'chat', sessionId: null };
    this.navOpen = false;
    void this.updateComplete.then(() => this.chat?.focus());
  }

  #openSession(id: string): void {
    this.view = { kind: 'chat', sessionId: id };
    this.navOpen = false;
    void this.updateComplete.then(() => this.chat?.focus());
  }

  #sessionChanged(event: SessionChangedEvent): void {
    const session = event.session;
    if (session !== null) {
      // A conversation this view just made: show it in the list at once.
      this.sessions = [session, ...this.sessions.filter((s) => s.id !== session.id)];
      this.view = { kind: 'chat', sessionId: session.id };
    }
    this.#loadSessionsSoon();
  }

  async #rename(event: RenameSessionEvent): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    const { sessionId, title } = event;
    this.sessions = this.sessions.map((s) => (s.id === sessionId ? { ...s, title } : s));
    try {
      await client.renameSession(sessionId, title);
    } catch (error) {
      this.#toast(strings.renameFailed, describeError(error), 'error');
    }
    void this.#loadSessions();
  }

  async #delete(event: DeleteSessionEvent): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    try {
      await client.deleteSession(event.sessionId);
      this.sessions = this.sessions.filter((s) => s.id !== event.sessionId);
      if (this.view.kind === 'chat' && this.view.sessionId === event.sessionId) this.#newChat();
    } catch (error) {
      this.#toast(strings.deleteFailed, describeError(error), 'error');
    }
  }

  override render(): TemplateResult {
    const login = this.login;
    if (login === null) return html``;
    const count = login.inbox.cards.length;
    const view = this.view;
    const openSession = view.kind === 'chat' && view.sessionId !== null ? (this.sessions.find((s) => s.id === view.sessionId) ?? null) : null;
    return html`
      <div
        class="layout"
        data-nav-open=${this.navOpen ? 'true' : 'false'}
        @skald-open-session=${(e: OpenSessionEvent) => this.#openSession(e.sessionId)}
        @skald-new-chat-request=${(e: NewChatEvent) => {
          e.stopPropagation();
          this.#newChat();
        }}
        @skald-session-changed=${(e: SessionChangedEvent) => this.#sessionChanged(e)}
        @skald-rename-session=${(e: RenameSessionEvent) => void this.#rename(e)}
        @skald-delete-session=${(e: DeleteSessionEvent) => void this.#delete(e)}
        @skald-dismiss-toast=${(e: DismissToastEvent) => (this.toasts = this.toasts.filter((t) => t.id !== e.id))}
      >
        <a class="skip" href="#main" @click=${this.#skipToMain}>${strings.skipToMain}</a>
        <button
          type="button"
          class="quiet menu"
          aria-expanded=${this.navOpen ? 'true' : 'false'}
          aria-controls="nav"
          @click=${() => (this.navOpen = !this.navOpen)}
        >
          ${menuIcon}<span class="visually-hidden">${strings.menu}</span>
        </button>
        <aside id="nav" class="nav" aria-label=${strings.navLabel}>
          <h1 class="brand">${strings.productName}</h1>
          <skald-session-list
            .sessions=${this.sessions}
            .selected=${view.kind === 'chat' ? view.sessionId : null}
            ?loading=${this.sessionsLoading}
          ></skald-session-list>
          <div class="nav-foot">
            <button
              type="button"
              class="quiet inbox-link"
              data-testid="nav-inbox"
              aria-current=${view.kind === 'inbox' ? 'page' : nothing}
              @click=${() => {
                this.view = { kind: 'inbox' };
                this.navOpen = false;
              }}
            >
              <span class="with-icon">${inboxIcon}${strings.inboxTitle}</span>
              ${count > 0
                ? html`<span class="count" data-testid="inbox-count" aria-label=${strings.inboxCount.replace('{n}', String(count))}>${count}</span>`
                : nothing}
            </button>
            <div class="me" data-testid="me">
              <skald-avatar size="small" .name=${login.me.user.name}></skald-avatar>
              <span class="me-text">
                <span class="me-name">${login.me.user.name}</span>
                <span class="me-role">${login.me.role.label}</span>
              </span>
              <button type="button" class="lock" data-testid="lock" @click=${() => this.dispatchEvent(new LockEvent())}>
                ${lockIcon}${strings.lock}
              </button>
            </div>
          </div>
        </aside>
        <main id="main" class="main" tabindex="-1">
          ${view.kind === 'inbox'
            ? html`<skald-inbox .login=${login} .sessions=${this.sessions}></skald-inbox>`
            : html`<skald-chat
                .login=${login}
                .session=${openSession ?? (view.sessionId === null ? null : placeholder(view.sessionId))}
                .models=${this.models}
                ?modelsLoaded=${this.modelsLoaded}
              ></skald-chat>`}
        </main>
        <skald-toasts .toasts=${this.toasts}></skald-toasts>
      </div>
    `;
  }

  #skipToMain(event: Event): void {
    event.preventDefault();
    this.renderRoot.querySelector<HTMLElement>('#main')?.focus();
  }
}

/** A conversation known by id only, until the list has it. */
function placeholder(id: string): ChatSession {
  return { id, agent: 'main', model: null, title: '', created_at: '', updated_at: '', turn_state: null, outside_content: false };
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-workspace': SkaldWorkspace;
  }
  interface HTMLElementEventMap {
    [LockEvent.type]: LockEvent;
  }
}
