/**
 * Skald once a person is logged in: the navigation (conversations, the
 * inbox with its count, notes, files, memory, the people one looks after — for a
 * supervisor whose supervision is active (§6.2) — who can see my words, my
 * data, and — for those who manage the instance — administration; who is
 * logged in, Lock) beside the open page.
 *
 * Owns: the conversation list, the model list and the active supervision
 * edges both ways (read again when a notice comes) of this login, which page
 * is open (kept in the address bar's fragment, see state/route.ts, so Back
 * works and a page can be opened directly), and the calls that change the
 * list (rename, delete). A temporary chat is kept apart from the list, and
 * deleted when the person leaves it: for another conversation or a new one,
 * when they lock (the app asks, `leaveTemporaryChat`), and as the page goes
 * away (`pagehide`). Never: talks to the socket itself (the login's
 * LiveConnection does) or locks by itself (it asks the app with `skald-lock`).
 */
import { LitElement, html, nothing, type PropertyValues, type SVGTemplateResult, type TemplateResult } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';

import type { Conversation, LiveEvent, Model, SupervisionEdge, TurnState } from '../../api/types.js';
import { LiveEventsController } from '../../controllers/live-events-controller.js';
import { StoreController } from '../../controllers/store-controller.js';
import { strings } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import type { Login } from '../../state/login.js';
import { controls } from '../../styles/controls.js';
import { LockEvent, type NewChatEvent, type OpenSessionEvent, type SessionChangedEvent } from '../events.js';
import { parseRoute, routeHash, sameRoute, withoutFocus, type Route } from '../../state/route.js';
import { activeEdges, supervisorNames } from '../../state/supervision.js';
import { deleteTemporaryChat } from '../../state/temporary-chat.js';
import { SHORTCUTS, shortcutOf, type ShortcutAction } from '../../state/shortcuts.js';
import { bookmarkIcon, boxIcon, clockIcon, eyeIcon, folderIcon, gearIcon, inboxIcon, lockIcon, menuIcon, noteIcon, peopleIcon } from '../icons.js';
import '../skald-admin/skald-admin.js';
import '../skald-avatar/skald-avatar.js';
import '../skald-files/skald-files.js';
import '../skald-memories/skald-memories.js';
import '../skald-my-data/skald-my-data.js';
import '../skald-notes/skald-notes.js';
import '../skald-reminders/skald-reminders.js';
import '../skald-privacy/skald-privacy.js';
import '../skald-supervised/skald-supervised.js';
import type { SkaldChat } from '../skald-chat/skald-chat.js';
import '../skald-chat/skald-chat.js';
import '../skald-inbox/skald-inbox.js';
import '../skald-session-list/skald-session-list.js';
import type { DeleteSessionEvent, RenameSessionEvent, SessionFlagsEvent } from '../skald-session-list/skald-session-list.js';
import '../skald-toasts/skald-toasts.js';
import type { DismissToastEvent, Toast } from '../skald-toasts/skald-toasts.js';
import { styles } from './skald-workspace.styles.js';

const TOAST_MS = 8000;

/**
 * Test hooks: `[data-testid=nav-inbox]` (its `[data-testid=inbox-count]`),
 * `nav-notes`, `nav-files`, `nav-reminders`, `nav-memories`, `nav-supervised` (only for a supervisor
 * with an active edge), `nav-privacy`, `nav-data`, `nav-admin` (only for those who manage
 * the instance), `[data-testid=lock]`, `[data-testid=me]`; the open page's name is the
 * `data-page` attribute of `#main`.
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

  @state() private sessions: readonly Conversation[] = [];
  @state() private sessionsLoading = true;
  @state() private models: readonly Model[] = [];
  @state() private modelsLoaded = false;
  @state() private route: Route = { page: 'chat' };
  /** The conversation open on the chat page (`null`: a new one). */
  @state() private sessionId: string | null = null;
  /** The new conversation on the chat page is to be temporary. */
  @state() private temporaryNext = false;
  /** The temporary chat made from this page, never in `sessions`; deleted when left. */
  @state() private temporarySession: Conversation | null = null;
  /** A memory the Memory page is to show (from a reply's "used memories"). */
  @state() private memoryFocus: string | null = null;
  /** The spaces this person may open as a supervisor now; `null` until read. */
  @state() private supervising: readonly SupervisionEdge[] | null = null;
  /** Who may open this person's space now, by name: whom a card their role sends on waits for. */
  @state() private supervisors: readonly string[] = [];
  @state() private navOpen = false;
  @state() private toasts: readonly Toast[] = [];

  @query('skald-chat') private chat?: SkaldChat;

  /** A notice may be about supervision (§6.2): whose space one may open is read again. */
  readonly #noticesSeen = (): void => void this.#loadSupervising();
  #toastId = 0;
  #listRead = 0;
  #alive = new AbortController();
  #listTimer: ReturnType<typeof setTimeout> | undefined;

  constructor() {
    super();
    new StoreController(this, () => this.login?.inbox);
    new StoreController(this, () => this.login?.notices);
    new LiveEventsController(this, () => this.login?.live ?? null, {
      onEvent: (event) => this.#onLive(event),
      onResync: () => {
        void this.#loadSessions();
        void this.#loadSupervising();
      },
    });
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('login')) {
      changed.get('login')?.notices.removeEventListener('change', this.#noticesSeen);
      if (this.login) {
        void this.#loadSessions();
        void this.#loadModels();
        void this.#loadSupervising();
        this.login.notices.addEventListener('change', this.#noticesSeen);
      }
    }
    if (changed.has('newChatRequests') && changed.get('newChatRequests') !== undefined) this.#newChat();
  }

  protected override firstUpdated(): void {
    this.chat?.focus();
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.#alive = new AbortController();
    this.route = this.#readAddress();
    window.addEventListener('hashchange', this.#onAddressChanged);
    window.addEventListener('popstate', this.#onAddressChanged);
    window.addEventListener('keydown', this.#onKey);
    window.addEventListener('pagehide', this.#onPageHide);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearTimeout(this.#listTimer);
    this.#alive.abort();
    window.removeEventListener('hashchange', this.#onAddressChanged);
    window.removeEventListener('popstate', this.#onAddressChanged);
    window.removeEventListener('keydown', this.#onKey);
    window.removeEventListener('pagehide', this.#onPageHide);
    this.login?.notices.removeEventListener('change', this.#noticesSeen);
  }

  /**
   * Deletes the temporary chat, if one was made, before the app locks: the person is
   * leaving it. Whatever the server answers, the page forgets it (the server deletes
   * what is left at the lock, or at the next unlock).
   */
  async leaveTemporaryChat(): Promise<void> {
    const temporary = this.temporarySession;
    const client = this.login?.client;
    this.temporarySession = null;
    this.temporaryNext = false;
    if (this.sessionId !== null && this.sessionId === temporary?.id) this.sessionId = null;
    if (!temporary || !client) return;
    try {
      await deleteTemporaryChat(client, temporary.id);
    } catch (error) {
      this.#toast(strings.temporaryDeleteFailed, describeError(error), 'error');
    }
  }

  /** The page is going away (closed, reloaded, navigated off): its temporary chat goes too. */
  readonly #onPageHide = (): void => {
    const temporary = this.temporarySession;
    if (!temporary) return;
    this.login?.client.deleteSessionAsPageLeaves(temporary.id);
    // Brought back from the browser's cache, the page starts a new conversation instead.
    this.temporarySession = null;
    if (this.sessionId === temporary.id) this.sessionId = null;
  };

  /**
   * The page the address names. A memory to show, or a conversation to open (a task's,
   * from its desktop notification), is taken out of the address at once (kept here), so
   * the history holds the page, never the id.
   */
  #readAddress(): Route {
    const parsed = parseRoute(window.location.hash);
    const route = withoutFocus(parsed);
    const once = parsed.page === 'memories' ? parsed.focus : parsed.page === 'chat' ? parsed.open : undefined;
    if (once === undefined) return route;
    if (parsed.page === 'memories') this.memoryFocus = once;
    else this.sessionId = once;
    window.history.replaceState(null, '', `${window.location.pathname}${window.location.search}${routeHash(route)}`);
    return route;
  }

  /** The keyboard shortcuts (state/shortcuts.ts), from anywhere in the workspace. */
  readonly #onKey = (event: KeyboardEvent): void => {
    const action = shortcutOf(event);
    if (action === null || event.defaultPrevented) return;
    // An open dialog keeps Escape to itself.
    if (event.key === 'Escape' && this.#dialogOpen()) return;
    switch (action) {
      case 'new-chat':
        this.#newChat();
        break;
      case 'search':
        this.navOpen = true;
        this.renderRoot.querySelector('skald-session-list')?.focusSearch();
        break;
      case 'focus-composer':
        if (this.route.page !== 'chat') this.#go({ page: 'chat' });
        void this.updateComplete.then(() => this.chat?.focus());
        break;
      case 'speak':
        if (this.route.page !== 'chat') this.#go({ page: 'chat' });
        void this.updateComplete.then(() => this.chat?.toggleMicrophone());
        break;
      case 'stop':
        if (this.route.page !== 'chat' || !this.chat?.stopReply()) return;
        break;
      case 'help':
        this.renderRoot.querySelector<HTMLDialogElement>('dialog.shortcuts')?.showModal();
        break;
    }
    event.preventDefault();
  };

  /** Whether a modal dialog is open anywhere in the page (through shadow roots). */
  #dialogOpen(): boolean {
    const open = (root: Document | ShadowRoot): boolean =>
      root.querySelector('dialog[open]') !== null || [...root.querySelectorAll('*')].some((el) => el.shadowRoot !== null && open(el.shadowRoot));
    return open(document);
  }

  /** A link was followed, Back or Forward pressed, or the address typed: open that page. */
  readonly #onAddressChanged = (): void => {
    const route = this.#readAddress();
    if (sameRoute(route, this.route)) return;
    // Within the Files page (a document opened, a page turned) the page moves focus itself:
    // taking it to #main would lose the Next link a person is pressing again and again.
    const withinFiles = route.page === 'files' && this.route.page === 'files';
    if (route.page !== 'memories') this.memoryFocus = null;
    this.route = route;
    this.navOpen = false;
    if (route.page === 'inbox') void this.login?.notices.refresh().catch(() => undefined);
    // An edge may have begun (an enrolment) or ended since they were read.
    if (route.page === 'supervised') void this.#loadSupervising();
    void this.updateComplete.then(() => {
      if (route.page === 'chat') this.chat?.focus();
      else if (!withinFiles) this.renderRoot.querySelector<HTMLElement>('#main')?.focus();
    });
  };

  /** Opens a page, leaving an entry in the history. */
  #go(route: Route): void {
    this.navOpen = false;
    if (sameRoute(route, this.route)) return;
    if (route.page !== 'memories') this.memoryFocus = null;
    this.route = route;
    const hash = routeHash(route);
    // pushState, not location.hash: an empty fragment would leave a bare '#'.
    window.history.pushState(null, '', `${window.location.pathname}${window.location.search}${hash}`);
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

  /**
   * The edges that let this person open someone's space now (the navigation shows the page
   * only then), and those that let someone open theirs (whom their cards may wait for).
   */
  async #loadSupervising(): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    try {
      const mine = await client.mySupervision(this.#alive.signal);
      this.supervising = activeEdges(mine.supervising);
      this.supervisors = supervisorNames(mine.supervised_by);
    } catch {
      // Not read: the page stays out of the navigation; its address still says so when opened.
      if (!this.#alive.signal.aborted) this.supervising ??= [];
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
      case 'titled': {
        const { session, title } = event;
        this.sessions = this.sessions.map((s) => (s.id === session ? { ...s, title } : s));
        if (this.temporarySession?.id === session) this.temporarySession = { ...this.temporarySession, title };
        break;
      }
      default:
        break;
    }
  }

  /** Shows a conversation's new state at once, then reads the list again to be sure. */
  #setTurnState(sessionId: string, state: TurnState): void {
    this.sessions = this.sessions.map((s) => (s.id === sessionId ? { ...s, turn_state: state } : s));
    this.#loadSessionsSoon();
  }

  #toast(title: string, body: string, kind: Toast['kind']): void {
    const id = ++this.#toastId;
    this.toasts = [...this.toasts.slice(-3), { id, title, body, kind }];
    setTimeout(() => (this.toasts = this.toasts.filter((t) => t.id !== id)), TOAST_MS);
  }

  /** A new conversation, or a new temporary one; a temporary chat open until now is left, so deleted. */
  #newChat(temporary = false): void {
    void this.leaveTemporaryChat();
    this.sessionId = null;
    this.temporaryNext = temporary;
    this.#go({ page: 'chat' });
    void this.updateComplete.then(() => this.chat?.focus());
  }

  #openSession(id: string): void {
    if (this.temporarySession !== null && this.temporarySession.id !== id) void this.leaveTemporaryChat();
    this.sessionId = id;
    this.temporaryNext = false;
    this.#go({ page: 'chat' });
    void this.updateComplete.then(() => this.chat?.focus());
  }

  #sessionChanged(event: SessionChangedEvent): void {
    const session = event.session;
    if (session?.temporary) {
      // A temporary chat this view just made (or its first title): kept apart, never listed.
      this.temporarySession = session;
      this.sessionId = session.id;
      this.temporaryNext = false;
    } else if (session !== null) {
      // A conversation this view just made: show it in the list at once.
      this.sessions = [session, ...this.sessions.filter((s) => s.id !== session.id)];
      this.sessionId = session.id;
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

  /** Pins or archives a conversation at once in the list, then as the server has it. */
  async #setFlags(event: SessionFlagsEvent): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    const { sessionId, flags } = event;
    this.sessions = this.sessions.map((s) => (s.id === sessionId ? { ...s, ...flags } : s));
    try {
      await client.setSessionFlags(sessionId, flags);
    } catch (error) {
      this.#toast(strings.flagsFailed, describeError(error), 'error');
    }
    void this.#loadSessions();
  }

  async #delete(event: DeleteSessionEvent): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    try {
      await client.deleteSession(event.sessionId);
      this.sessions = this.sessions.filter((s) => s.id !== event.sessionId);
      if (this.sessionId === event.sessionId) {
        this.sessionId = null;
        if (this.route.page === 'chat') this.#newChat();
      }
    } catch (error) {
      this.#toast(strings.deleteFailed, describeError(error), 'error');
    }
  }

  override render(): TemplateResult {
    const login = this.login;
    if (login === null) return html``;
    const count = login.inbox.cards.length + login.notices.notices.length;
    const route = this.route;
    const admin = login.me.role?.manage_instance ?? false;
    return html`
      <div
        class="layout"
        data-nav-open=${this.navOpen ? 'true' : 'false'}
        @skald-open-session=${(e: OpenSessionEvent) => this.#openSession(e.sessionId)}
        @skald-new-chat-request=${(e: NewChatEvent) => {
          e.stopPropagation();
          this.#newChat(e.temporary);
        }}
        @skald-session-changed=${(e: SessionChangedEvent) => this.#sessionChanged(e)}
        @skald-rename-session=${(e: RenameSessionEvent) => void this.#rename(e)}
        @skald-delete-session=${(e: DeleteSessionEvent) => void this.#delete(e)}
        @skald-session-flags=${(e: SessionFlagsEvent) => void this.#setFlags(e)}
        @skald-dismiss-toast=${(e: DismissToastEvent) => (this.toasts = this.toasts.filter((t) => t.id !== e.id))}
      >
        <button type="button" class="skip" @click=${this.#skipToMain}>${strings.skipToMain}</button>
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
            .selected=${route.page === 'chat' ? this.sessionId : null}
            ?loading=${this.sessionsLoading}
            .client=${this.login?.client ?? null}
          ></skald-session-list>
          <div class="nav-foot">
            <nav aria-label=${strings.pagesLabel}>
              <ul class="pages">
                <li>
                  <a class="page-link" href="#/inbox" data-testid="nav-inbox" aria-current=${route.page === 'inbox' ? 'page' : nothing}>
                    <span class="with-icon">${inboxIcon}${strings.inboxTitle}</span>
                    ${count > 0
                      ? html`<span class="count" data-testid="inbox-count"
                          ><span aria-hidden="true">${count}</span
                          ><span class="visually-hidden">${strings.inboxCount.replace('{n}', String(count))}</span></span
                        >`
                      : nothing}
                  </a>
                </li>
                ${this.#pageLink('notes', '#/notes', noteIcon, strings.notesTitle)}
                ${this.#pageLink('files', '#/files', folderIcon, strings.filesTitle)}
                ${this.#pageLink('reminders', '#/reminders', clockIcon, strings.remindersTitle)}
                ${this.#pageLink('memories', '#/memories', bookmarkIcon, strings.memoriesTitle)}
                ${(this.supervising?.length ?? 0) > 0 ? this.#pageLink('supervised', '#/supervised', peopleIcon, strings.supervisedNav) : nothing}
                ${this.#pageLink('privacy', '#/privacy', eyeIcon, strings.privacyNav)}
                ${this.#pageLink('data', '#/data', boxIcon, strings.dataNav)}
                ${admin ? this.#pageLink('admin', '#/admin/people', gearIcon, strings.adminNav) : nothing}
              </ul>
            </nav>
            <button
              type="button"
              class="link shortcuts-link"
              data-testid="open-shortcuts"
              @click=${() => this.renderRoot.querySelector<HTMLDialogElement>('dialog.shortcuts')?.showModal()}
            >
              ${strings.shortcutsTitle}
            </button>
            <div class="me" data-testid="me">
              <skald-avatar size="small" .name=${login.me.user.name}></skald-avatar>
              <span class="me-text">
                <span class="me-name">${login.me.user.name}</span>
                <span class="me-role">${login.me.role?.label ?? ''}</span>
              </span>
              <button type="button" class="lock" data-testid="lock" @click=${() => this.dispatchEvent(new LockEvent())}>
                ${lockIcon}${strings.lock}
              </button>
            </div>
          </div>
        </aside>
        <main id="main" class="main" tabindex="-1" data-page=${route.page}>${this.#renderPage(login)}</main>
        ${this.#renderShortcuts()}
        <skald-toasts .toasts=${this.toasts}></skald-toasts>
      </div>
    `;
  }

  #renderShortcuts(): TemplateResult {
    const what: Readonly<Record<ShortcutAction, string>> = {
      'new-chat': strings.shortcutNewChat,
      search: strings.shortcutSearch,
      'focus-composer': strings.shortcutFocusComposer,
      speak: strings.shortcutSpeak,
      stop: strings.shortcutStop,
      help: strings.shortcutHelp,
    };
    return html`<dialog class="shortcuts" aria-labelledby="shortcuts-title" data-testid="shortcuts">
      <form method="dialog">
        <h2 id="shortcuts-title">${strings.shortcutsTitle}</h2>
        <dl>
          ${SHORTCUTS.map(
            (shortcut) => html`<div class="shortcut">
              <dt>${shortcut.keys.map((key, i) => html`${i > 0 ? '+' : ''}<kbd>${key}</kbd>`)}</dt>
              <dd>${what[shortcut.action]}</dd>
            </div>`,
          )}
        </dl>
        <p class="hint">${strings.shortcutsMac}</p>
        <div class="actions end"><button value="close" autofocus>${strings.close}</button></div>
      </form>
    </dialog>`;
  }

  #pageLink(page: Route['page'], href: string, icon: TemplateResult | SVGTemplateResult, label: string): TemplateResult {
    return html`<li>
      <a class="page-link" href=${href} data-testid="nav-${page}" aria-current=${this.route.page === page ? 'page' : nothing}>
        <span class="with-icon">${icon}${label}</span>
      </a>
    </li>`;
  }

  #renderPage(login: Login): TemplateResult {
    const route = this.route;
    switch (route.page) {
      case 'inbox':
        return html`<skald-inbox .login=${login} .sessions=${this.sessions} .models=${this.models} .supervisors=${this.supervisors}></skald-inbox>`;
      case 'notes':
        return html`<skald-notes .login=${login}></skald-notes>`;
      case 'files':
        return html`<skald-files .login=${login} .documentId=${route.document ?? null} .documentPage=${route.documentPage ?? 1}></skald-files>`;
      case 'reminders':
        return html`<skald-reminders .login=${login}></skald-reminders>`;
      case 'memories':
        return html`<skald-memories .login=${login} .focusMemory=${this.memoryFocus}></skald-memories>`;
      case 'privacy':
        return html`<skald-privacy .login=${login}></skald-privacy>`;
      case 'data':
        return html`<skald-my-data .login=${login}></skald-my-data>`;
      case 'supervised':
        return html`<skald-supervised .login=${login} .edges=${this.supervising} .person=${route.person ?? null}></skald-supervised>`;
      case 'admin':
        return html`<skald-admin .login=${login} .section=${route.section} .models=${this.models}
          @skald-models-changed=${() => void this.#loadModels()}></skald-admin>`;
      case 'chat': {
        const id = this.sessionId;
        const temporary = this.temporarySession;
        const openSession =
          id === null ? null : temporary?.id === id ? temporary : (this.sessions.find((s) => s.id === id) ?? placeholder(id));
        return html`<skald-chat
          .login=${login}
          .session=${openSession}
          .models=${this.models}
          .supervisors=${this.supervisors}
          ?modelsLoaded=${this.modelsLoaded}
          ?temporary=${this.temporaryNext}
        ></skald-chat>`;
      }
    }
  }

  /**
   * A button, not a link to #main: the conversation lives in a shadow root, where a
   * fragment link can never lead (and axe-core looks for its target in vain).
   */
  #skipToMain(): void {
    this.renderRoot.querySelector<HTMLElement>('#main')?.focus();
  }
}

/** A conversation known by id only, until the list has it. */
function placeholder(id: string): Conversation {
  return { id, agent: 'main', model: null, title: '', created_at: '', updated_at: '', turn_state: null, active_turn: null, outside_content: false, pinned: false, archived: false, temporary: false };
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-workspace': SkaldWorkspace;
  }
}
