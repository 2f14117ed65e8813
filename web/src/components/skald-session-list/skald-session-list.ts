/**
 * The person's conversations, newest first: search by title at once and,
 * below, inside the conversations through the server; open, rename in
 * place, delete after a confirmation. A conversation waiting on the
 * person (a parked turn) or being answered says so. Beside "New chat", a
 * temporary chat: one that is never listed here.
 */
import { LitElement, html, nothing, type PropertyValues, type TemplateResult } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import { repeat } from 'lit/directives/repeat.js';

import type { ApiClient } from '../../api/client.js';
import type { Conversation, MessageHit } from '../../api/types.js';
import { strings } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import { snippetParts } from '../../state/notes.js';
import { DebouncedSearch } from '../../state/debounced-search.js';
import { groupByPeriod, type Period } from '../../state/session-groups.js';
import { controls } from '../../styles/controls.js';
import { NewChatEvent, OpenSessionEvent } from '../events.js';
import { archiveIcon, clockIcon, pencilIcon, pinIcon, plusIcon, trashIcon, unarchiveIcon } from '../icons.js';
import { styles } from './skald-session-list.styles.js';

/** How long typing pauses before the search inside conversations runs. */
const SEARCH_DELAY_MS = 250;
/** Shorter text matches too much to be worth a request. */
const SEARCH_MIN_CHARS = 2;

/** The person renamed a conversation. */
export class RenameSessionEvent extends Event {
  static readonly type = 'skald-rename-session';
  constructor(
    readonly sessionId: string,
    readonly title: string,
  ) {
    super(RenameSessionEvent.type, { bubbles: true, composed: true });
  }
}

/** The person pinned or archived a conversation, or undid it. */
export class SessionFlagsEvent extends Event {
  static readonly type = 'skald-session-flags';
  constructor(
    readonly sessionId: string,
    readonly flags: { readonly pinned?: boolean; readonly archived?: boolean },
  ) {
    super(SessionFlagsEvent.type, { bubbles: true, composed: true });
  }
}

/** The person confirmed deleting a conversation. */
export class DeleteSessionEvent extends Event {
  static readonly type = 'skald-delete-session';
  constructor(readonly sessionId: string) {
    super(DeleteSessionEvent.type, { bubbles: true, composed: true });
  }
}

/**
 * Test hooks: `[data-testid=new-chat]`, `[data-testid=new-temporary-chat]`, `[data-testid=search]`,
 * `[data-testid=session]` (with `data-id`), `[data-testid=rename]`,
 * `[data-testid=delete]`, `[data-testid=confirm-delete]`,
 * `[data-testid=message-hit]` (with `data-id`, the conversation's id).
 *
 * @summary The conversation list with search, rename and delete.
 * @fires skald-open-session - open a conversation
 * @fires skald-new-chat-request - start a new one (its `temporary` says which kind)
 * @fires skald-rename-session - a new title
 * @fires skald-delete-session - delete, confirmed
 */
@customElement('skald-session-list')
export class SkaldSessionList extends LitElement {
  static override styles = [controls, styles];

  @property({ attribute: false }) sessions: readonly Conversation[] = [];
  /** The open conversation's id (`null`: a new one). */
  @property({ attribute: false }) selected: string | null = null;
  @property({ type: Boolean }) loading = false;
  /** Searches inside the conversations; without it only titles are searched. */
  @property({ attribute: false }) client: ApiClient | null = null;

  @state() private filter = '';
  /** Whether the archived conversations are shown. */
  @state() private showArchived = false;
  @state() private renaming: string | null = null;
  @state() private deleting: Conversation | null = null;
  /** Rows inside conversations matching the search; null when none was asked for. */
  @state() private hits: readonly MessageHit[] | null = null;
  @state() private searchError = '';

  /** Inside the conversations, once typing pauses; an older answer arriving late is dropped. */
  readonly #search = new DebouncedSearch<readonly MessageHit[]>({
    delayMs: SEARCH_DELAY_MS,
    minChars: SEARCH_MIN_CHARS,
    run: (query) => (this.client ? this.client.searchSessions(query) : Promise.resolve([])),
    onResults: (hits) => {
      this.hits = hits;
      this.searchError = '';
    },
    onError: (error) => {
      this.hits = null;
      this.searchError = strings.searchFailed.replace('{error}', describeError(error));
    },
  });

  @query('dialog') private dialog?: HTMLDialogElement;
  @query('.rename-field') private renameField?: HTMLInputElement;

  /** Puts the cursor in the search field. */
  focusSearch(): void {
    void this.updateComplete.then(() => this.renderRoot.querySelector<HTMLInputElement>('#search')?.focus());
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#search.cancel();
  }

  protected override updated(changed: PropertyValues): void {
    if (changed.has('renaming') && this.renaming !== null) {
      this.renameField?.focus();
      this.renameField?.select();
    }
    if (changed.has('deleting') && this.deleting !== null && this.dialog && !this.dialog.open) this.dialog.showModal();
  }

  override render(): TemplateResult {
    const needle = this.filter.trim().toLowerCase();
    const matching = needle === '' ? this.sessions : this.sessions.filter((s) => titleOf(s).toLowerCase().includes(needle));
    // Archived conversations are put away: out of the list unless asked for (or searched).
    const archived = matching.filter((s) => s.archived);
    const shown = matching.filter((s) => !s.archived || this.showArchived || needle !== '');
    const pinned = shown.filter((s) => s.pinned);
    return html`
      <div class="new-row">
        <button type="button" class="new primary" data-testid="new-chat" @click=${() => this.dispatchEvent(new NewChatEvent())}>
          ${plusIcon} ${strings.newChat}
        </button>
        <button
          type="button"
          class="new-temporary"
          data-testid="new-temporary-chat"
          title=${strings.temporaryChatHint}
          aria-describedby="temporary-hint"
          @click=${() => this.dispatchEvent(new NewChatEvent(true))}
        >
          ${clockIcon} ${strings.temporaryChat}
        </button>
        <span class="visually-hidden" id="temporary-hint">${strings.temporaryChatHint}</span>
      </div>
      <div class="search">
        <label class="visually-hidden" for="search">${strings.searchLabel}</label>
        <input
          id="search"
          type="search"
          data-testid="search"
          placeholder=${strings.searchPlaceholder}
          .value=${this.filter}
          @input=${(e: Event) => this.#filterBy((e.target as HTMLInputElement).value)}
        />
      </div>
      <nav aria-label=${strings.sessionsLabel}>
        ${this.loading && this.sessions.length === 0 ? html`<p class="hint pad">${strings.loading}</p>` : nothing}
        ${!this.loading && shown.length === 0 && !this.hits?.length
          ? html`<p class="hint pad">${needle === '' ? strings.noSessions : strings.noMatches}</p>`
          : nothing}
        ${pinned.length > 0
          ? html`<h2 class="period" id="period-pinned">${strings.periodPinned}</h2>
              <ul aria-labelledby="period-pinned" data-testid="session-group" data-period="pinned">
                ${repeat(pinned, (s) => s.id, (s) => this.#renderRow(s))}
              </ul>`
          : nothing}
        ${groupByPeriod(
          shown.filter((s) => !s.pinned),
          new Date(),
        ).map(
          (group) => html`<h2 class="period" id="period-${group.period}">${periodLabel(group.period)}</h2>
            <ul aria-labelledby="period-${group.period}" data-testid="session-group" data-period=${group.period}>
              ${repeat(group.sessions, (s) => s.id, (s) => this.#renderRow(s))}
            </ul>`,
        )}
        ${archived.length > 0 && needle === ''
          ? html`<button type="button" class="link show-archived" data-testid="show-archived" aria-pressed=${this.showArchived ? 'true' : 'false'}
              @click=${() => (this.showArchived = !this.showArchived)}>
              ${(this.showArchived ? strings.hideArchived : strings.showArchived).replace('{n}', String(archived.length))}
            </button>`
          : nothing}
        ${this.#renderHits()}
      </nav>
      <dialog aria-labelledby="delete-title" @close=${() => (this.deleting = null)}>
        ${this.deleting
          ? html`<form method="dialog">
              <h2 id="delete-title">${strings.deleteTitle}</h2>
              <p>${strings.deleteBody.replace('{title}', titleOf(this.deleting))}</p>
              <div class="actions end">
                <button value="cancel" autofocus>${strings.cancel}</button>
                <button
                  type="button"
                  class="danger"
                  data-testid="confirm-delete"
                  @click=${() => this.#confirmDelete()}
                >
                  ${strings.delete}
                </button>
              </div>
            </form>`
          : nothing}
      </dialog>
    `;
  }

  #renderHits(): TemplateResult | typeof nothing {
    if (this.searchError) return html`<p class="hint pad" role="alert">${this.searchError}</p>`;
    if (!this.hits?.length) return nothing;
    return html`<h2 class="period" id="in-conversations">${strings.inConversations}</h2>
      <ul aria-labelledby="in-conversations" data-testid="message-hits">
        ${repeat(
          this.hits,
          (hit) => hit.message_id,
          (hit) => html`<li class="row">
            <button
              type="button"
              class="open"
              data-testid="message-hit"
              data-id=${hit.session_id}
              @click=${() => this.dispatchEvent(new OpenSessionEvent(hit.session_id))}
            >
              <span class="row-title">${hit.title || strings.untitled}</span>
              <span class="hit-snippet">${snippetParts(hit.snippet).map((part) => (part.match ? html`<mark>${part.text}</mark>` : part.text))}</span>
            </button>
          </li>`,
        )}
      </ul>`;
  }

  /** Filters the titles at once; searches inside the conversations once typing pauses (with a client to ask). */
  #filterBy(text: string): void {
    this.filter = text;
    this.#search.input(this.client ? text : '');
  }

  #renderRow(session: Conversation): TemplateResult {
    const title = titleOf(session);
    const current = session.id === this.selected;
    if (this.renaming === session.id) {
      return html`<li class="row renaming">
        <form class="rename" @submit=${(e: Event) => this.#commitRename(e, session)}>
          <label class="visually-hidden" for="rename-${session.id}">${strings.renameLabel}</label>
          <input
            id="rename-${session.id}"
            class="rename-field"
            .value=${session.title}
            @keydown=${(e: KeyboardEvent) => {
              if (e.key === 'Escape') {
                e.preventDefault();
                this.renaming = null;
              }
            }}
            @blur=${(e: Event) => this.#commitRename(e, session)}
          />
        </form>
      </li>`;
    }
    const state = session.turn_state === 'parked' ? strings.sessionWaiting : session.turn_state === 'running' ? strings.sessionReplying : '';
    return html`<li class="row" data-current=${current ? 'true' : 'false'}>
      <button
        type="button"
        class="open"
        data-testid="session"
        data-id=${session.id}
        aria-current=${current ? 'page' : nothing}
        @click=${() => this.dispatchEvent(new OpenSessionEvent(session.id))}
      >
        <span class="row-title">${title}</span>
        ${state ? html`<span class="state" data-state=${session.turn_state ?? ''}>${state}</span>` : nothing}
      </button>
      <span class="row-tools">
        <button
          type="button"
          class="quiet icon"
          data-testid="pin"
          aria-pressed=${session.pinned ? 'true' : 'false'}
          aria-label=${(session.pinned ? strings.unpinNamed : strings.pinNamed).replace('{title}', title)}
          @click=${() => this.dispatchEvent(new SessionFlagsEvent(session.id, { pinned: !session.pinned }))}
        >
          ${pinIcon}
        </button>
        <button
          type="button"
          class="quiet icon"
          data-testid="archive"
          aria-label=${(session.archived ? strings.unarchiveNamed : strings.archiveNamed).replace('{title}', title)}
          @click=${() => this.dispatchEvent(new SessionFlagsEvent(session.id, { archived: !session.archived }))}
        >
          ${session.archived ? unarchiveIcon : archiveIcon}
        </button>
        <button type="button" class="quiet icon" data-testid="rename" aria-label=${strings.renameNamed.replace('{title}', title)} @click=${() => (this.renaming = session.id)}>
          ${pencilIcon}
        </button>
        <button type="button" class="quiet icon" data-testid="delete" aria-label=${strings.deleteNamed.replace('{title}', title)} @click=${() => (this.deleting = session)}>
          ${trashIcon}
        </button>
      </span>
    </li>`;
  }

  #commitRename(event: Event, session: Conversation): void {
    event.preventDefault();
    if (this.renaming !== session.id) return;
    const field = this.renameField;
    const title = field?.value.trim() ?? '';
    this.renaming = null;
    if (title !== '' && title !== session.title) this.dispatchEvent(new RenameSessionEvent(session.id, title));
  }

  #confirmDelete(): void {
    const session = this.deleting;
    this.dialog?.close();
    this.deleting = null;
    if (session) this.dispatchEvent(new DeleteSessionEvent(session.id));
  }
}

function periodLabel(period: Period): string {
  const labels: Readonly<Record<Period, string>> = {
    today: strings.periodToday,
    yesterday: strings.periodYesterday,
    week: strings.periodWeek,
    month: strings.periodMonth,
    older: strings.periodOlder,
  };
  return labels[period];
}

function titleOf(session: Conversation): string {
  return session.title || strings.untitled;
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-session-list': SkaldSessionList;
  }
  interface HTMLElementEventMap {
    [RenameSessionEvent.type]: RenameSessionEvent;
    [DeleteSessionEvent.type]: DeleteSessionEvent;
    [SessionFlagsEvent.type]: SessionFlagsEvent;
  }
}
