/**
 * A supervisor's view of the spaces they may open (§6.2): the people who accepted them,
 * then one person's conversations, notes and memories, read-only, and the cards waiting
 * for the supervisor's decision (calls the person's role may not approve). Nothing is
 * opened until the supervisor chooses what to open, because each list opened, each item
 * read and each card decided is written in that person's own file, and shown to them on
 * their privacy page — which the banner says, plainly, above everything here.
 *
 * Owns: the reads of `/api/supervised/{user}/…`, and what they returned for as long as
 * the page is open; the decisions on those cards, each bound to the arguments shown.
 * Never: writes anything else to the supervised space, allows a tool for good, or keeps
 * what it read once the page leaves; puts only the person's id in the address bar.
 */
import { LitElement, html, nothing, type PropertyValues, type TemplateResult } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';

import type { ApprovalCard, Conversation, Memory, Note, NoteSummary, SupervisionEdge } from '../../api/types.js';
import { ActionController } from '../../controllers/action-controller.js';
import { strings, toolLabel } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import { formatDay, formatTime } from '../../i18n/format.js';
import { describeCall } from '../../i18n/tool-sentences.js';
import type { Login } from '../../state/login.js';
import { routeHash } from '../../state/route.js';
import type { AccessArea } from '../../state/supervision.js';
import { fromHistory, type Transcript, type Turn, type TurnItem } from '../../state/transcript.js';
import { controls, page, pageHost } from '../../styles/controls.js';
import type { DecideEvent } from '../events.js';
import { eyeIcon } from '../icons.js';
import type { SkaldApprovalCard } from '../skald-approval-card/skald-approval-card.js';
import '../skald-approval-card/skald-approval-card.js';
import '../skald-markdown/skald-markdown.js';
import { styles } from './skald-supervised.styles.js';

/** What is open of the person's space: an area's list, or one item of it. */
type Opened =
  | { readonly kind: 'nothing' }
  | { readonly kind: 'conversations'; readonly list: readonly Conversation[] }
  | { readonly kind: 'conversation'; readonly list: readonly Conversation[]; readonly conversation: Conversation; readonly transcript: Transcript }
  | { readonly kind: 'notes'; readonly list: readonly NoteSummary[] }
  | { readonly kind: 'note'; readonly list: readonly NoteSummary[]; readonly note: Note }
  | { readonly kind: 'memories'; readonly list: readonly Memory[] }
  | { readonly kind: 'cards'; readonly list: readonly ApprovalCard[] };

// What waits for the supervisor comes first: it is what they may have come for.
const AREAS: readonly AccessArea[] = ['cards', 'conversations', 'notes', 'memories'];

/**
 * Test hooks: `[data-testid=supervised-person]` links (their `data-name`),
 * `supervised-none`; on one person's page `[data-testid=supervised-banner]`,
 * `[data-testid=supervised-open]` buttons (their `data-area`),
 * `[data-testid=supervised-conversation]`, `supervised-note`, `supervised-memory` (each
 * item, the first two buttons), `[data-testid=supervised-transcript]`,
 * `supervised-note-title`, `supervised-note-body`, `supervised-back`,
 * `supervised-empty`, `supervised-refused`, `[data-testid=supervised-error]`; with the
 * cards open, `[data-testid=supervised-card]` (its `data-id`, `data-state`) each holding
 * a `skald-approval-card`, and `supervised-cards-none`.
 *
 * @summary The spaces a supervisor may open, read-only, each read shown to its owner.
 */
@customElement('skald-supervised')
export class SkaldSupervised extends LitElement {
  static override styles = [controls, pageHost, page, styles];

  @property({ attribute: false }) login: Login | null = null;
  /** The edges that let this person open a space now; `null` until they are read. */
  @property({ attribute: false }) edges: readonly SupervisionEdge[] | null = null;
  /** Whose space is open (a person's id), or `null` for the list of people. */
  @property() person: string | null = null;

  @state() private opened: Opened = { kind: 'nothing' };
  @state() private announcement = '';
  /** The card whose decision is on its way, if any. */
  @state() private deciding: string | null = null;
  /** Why the last decision on a card failed, by the card's id. */
  @state() private cardErrors: ReadonlyMap<string, string> = new Map();

  readonly #action = new ActionController(this);

  protected override willUpdate(changed: PropertyValues<this>): void {
    // Another person, or back to the list: what was read of the last one is dropped.
    if (changed.has('person')) {
      this.opened = { kind: 'nothing' };
      this.cardErrors = new Map();
      this.#action.error = '';
    }
  }

  override render(): TemplateResult {
    const edges = this.edges;
    if (this.person === null || edges === null) return this.#renderPeople(edges);
    const edge = edges.find((e) => e.supervised_id === this.person);
    return edge === undefined ? this.#renderRefused() : this.#renderSpace(edge);
  }

  // ---- the people one looks after -------------------------------------------------

  #renderPeople(edges: readonly SupervisionEdge[] | null): TemplateResult {
    return html`
      <header class="bar"><h2 id="supervised-title">${strings.supervisedTitle}</h2></header>
      <div class="scroll">
        <div class="column">
          <p class="lead">${strings.supervisedLead}</p>
          ${edges === null
            ? html`<p class="hint" role="status">${strings.loading}</p>`
            : edges.length === 0
              ? html`<p class="muted" data-testid="supervised-none">${strings.supervisedNone}</p>`
              : html`<ul class="rows block">
                  ${edges.map(
                    (edge) => html`<li>
                      <a href=${routeHash({ page: 'supervised', person: edge.supervised_id })} data-testid="supervised-person" data-name=${edge.supervised_name}>
                        ${strings.supervisedOpenSpace.replace('{name}', edge.supervised_name)}
                      </a>
                      <p class="small muted">${strings.supervisedSince.replace('{time}', formatDay(edge.accepted_at ?? edge.requested_at))}</p>
                    </li>`,
                  )}
                </ul>`}
        </div>
      </div>
    `;
  }

  #renderRefused(): TemplateResult {
    return html`
      <header class="bar"><h2>${strings.supervisedTitle}</h2></header>
      <div class="scroll">
        <div class="column">
          <section class="block" data-testid="supervised-refused" aria-labelledby="refused-title">
            <h3 id="refused-title">${strings.supervisedRefusedTitle}</h3>
            <p>${strings.supervisedRefused}</p>
            <p><a href=${routeHash({ page: 'supervised' })}>${strings.supervisedBackToPeople}</a></p>
          </section>
        </div>
      </div>
    `;
  }

  // ---- one person's space -----------------------------------------------------------

  #renderSpace(edge: SupervisionEdge): TemplateResult {
    const name = edge.supervised_name;
    const area = areaOf(this.opened);
    return html`
      <header class="bar">
        <h2 id="supervised-title">${strings.supervisedSpaceTitle.replace('{name}', name)}</h2>
        <a href=${routeHash({ page: 'supervised' })} class="small">${strings.supervisedBackToPeople}</a>
      </header>
      <div class="scroll">
        <div class="column">
          <div class="notice warn banner" role="note" data-testid="supervised-banner">
            ${eyeIcon}
            <p><strong>${strings.supervisedBanner.replace('{name}', name)}</strong> ${strings.supervisedReadOnly}</p>
          </div>
          <nav class="areas" aria-label=${strings.supervisedAreasLabel.replace('{name}', name)}>
            ${AREAS.map(
              (each) => html`<button
                type="button"
                data-testid="supervised-open"
                data-area=${each}
                aria-pressed=${area === each ? 'true' : 'false'}
                ?disabled=${this.#action.busy}
                @click=${() => void this.#open(edge, each)}
              >
                ${strings[AREA_LABELS[each]]}
              </button>`,
            )}
          </nav>
          ${this.opened.kind === 'nothing' ? html`<p class="muted">${strings.supervisedChoose.replace('{name}', name)}</p>` : nothing}
          ${this.#action.error ? html`<p class="notice error" role="alert" data-testid="supervised-error">${this.#action.error}</p>` : nothing}
          ${this.#action.busy ? html`<p class="hint" role="status">${strings.loading}</p>` : nothing}
          ${this.#renderOpened(edge)}
          <p class="visually-hidden" role="status" aria-live="polite">${this.announcement}</p>
        </div>
      </div>
    `;
  }

  #renderOpened(edge: SupervisionEdge): TemplateResult | typeof nothing {
    const opened = this.opened;
    switch (opened.kind) {
      case 'nothing':
        return nothing;
      case 'conversations':
        return this.#list(
          strings.supervisedConversations,
          opened.list.length,
          opened.list.map(
            (conversation) => html`<li>
              <button type="button" class="item" data-testid="supervised-conversation" ?disabled=${this.#action.busy}
                @click=${() => void this.#openConversation(edge, opened.list, conversation)}>
                <span class="item-title">${conversation.title || strings.untitled}</span>
                <span class="item-meta">${formatTime(conversation.updated_at)}</span>
              </button>
            </li>`,
          ),
        );
      case 'conversation':
        return this.#renderConversation(edge, opened.conversation, opened.transcript, () => (this.opened = { kind: 'conversations', list: opened.list }));
      case 'notes':
        return this.#list(
          strings.supervisedNotes,
          opened.list.length,
          opened.list.map(
            (note) => html`<li>
              <button type="button" class="item" data-testid="supervised-note" ?disabled=${this.#action.busy}
                @click=${() => void this.#openNote(edge, opened.list, note)}>
                <span class="item-title">${note.title}</span>
                <span class="item-meta">${formatTime(note.updated_at)}</span>
              </button>
            </li>`,
          ),
        );
      case 'note':
        return this.#renderNote(opened.note, () => (this.opened = { kind: 'notes', list: opened.list }));
      case 'cards':
        return this.#renderCards(edge, opened.list);
      case 'memories':
        return this.#list(
          strings.supervisedMemories,
          opened.list.length,
          opened.list.map(
            (memory) => html`<li data-testid="supervised-memory">
              <p class="memory">${memory.text}</p>
              <p class="item-meta">${formatTime(memory.created_at)}${memory.pinned ? html` · ${strings.supervisedPinned}` : nothing}</p>
            </li>`,
          ),
        );
    }
  }

  #list(title: string, count: number, items: readonly TemplateResult[]): TemplateResult {
    return html`<section class="block" aria-labelledby="opened-title">
      <h3 id="opened-title" tabindex="-1">${title}</h3>
      ${count === 0 ? html`<p class="muted" data-testid="supervised-empty">${strings.supervisedEmpty}</p>` : html`<ul class="rows items">${items}</ul>`}
    </section>`;
  }

  /** The cards waiting for this supervisor, each with exactly what it runs, Allow once and Deny. */
  #renderCards(edge: SupervisionEdge, cards: readonly ApprovalCard[]): TemplateResult {
    const name = edge.supervised_name;
    return html`<section class="block" aria-labelledby="opened-title">
      <h3 id="opened-title" tabindex="-1">${strings.supervisedCards}</h3>
      <p class="muted">${strings.supervisedCardsLead.replaceAll('{name}', name)}</p>
      ${cards.length === 0
        ? html`<p class="muted" data-testid="supervised-cards-none">${strings.supervisedCardsNone}</p>`
        : html`<ul class="cards">
            ${cards.map(
              (card) => html`<li data-testid="supervised-card" data-id=${card.id} data-state=${card.state}>
                <p class="item-meta">${formatTime(card.created_at)}</p>
                <skald-approval-card
                  .card=${card}
                  supervising
                  ?busy=${this.deciding !== null}
                  .error=${this.cardErrors.get(card.id) ?? ''}
                  @skald-decide=${(event: DecideEvent) => void this.#decide(edge, event)}
                ></skald-approval-card>
              </li>`,
            )}
          </ul>`}
    </section>`;
  }

  #renderConversation(edge: SupervisionEdge, conversation: Conversation, transcript: Transcript, back: () => void): TemplateResult {
    return html`<section class="block" aria-labelledby="opened-title" data-testid="supervised-transcript">
      <button type="button" class="link back" data-testid="supervised-back" @click=${back}>${strings.supervisedBackToConversations}</button>
      <h3 id="opened-title" tabindex="-1">${conversation.title || strings.untitled}</h3>
      ${transcript.turns.length === 0 ? html`<p class="muted" data-testid="supervised-empty">${strings.supervisedEmpty}</p>` : nothing}
      ${transcript.turns.map((turn) => this.#renderTurn(edge.supervised_name, turn))}
    </section>`;
  }

  #renderTurn(name: string, turn: Turn): TemplateResult {
    return html`<article class="turn" aria-label=${strings.turnLabel}>
      ${turn.userText !== null
        ? html`<div class="user">
            <h4 class="who">${name}</h4>
            <div class="bubble">${turn.userText}</div>
          </div>`
        : nothing}
      <div class="assistant">
        <h4 class="who">${strings.exportAssistant}</h4>
        ${turn.items.map((item) => renderItem(item))}
        ${turn.status === 'stopped' ? html`<p class="muted small">${strings.turnStopped}</p>` : nothing}
        ${turn.status === 'error' ? html`<p class="muted small">${strings.turnFailed}</p>` : nothing}
      </div>
    </article>`;
  }

  #renderNote(note: Note, back: () => void): TemplateResult {
    return html`<article class="block" aria-labelledby="opened-title">
      <button type="button" class="link back" data-testid="supervised-back" @click=${back}>${strings.supervisedBackToNotes}</button>
      <h3 id="opened-title" tabindex="-1" data-testid="supervised-note-title">${note.title}</h3>
      <p class="muted small">${strings.noteUpdated.replace('{time}', formatTime(note.updated_at))}</p>
      <div data-testid="supervised-note-body">
        ${note.body.trim() === '' ? html`<p class="muted">${strings.noteEmptyBody}</p>` : html`<skald-markdown .text=${note.body}></skald-markdown>`}
      </div>
    </article>`;
  }

  // ---- reads, each logged in the person's file ------------------------------------------

  async #open(edge: SupervisionEdge, area: AccessArea): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    const user = edge.supervised_id;
    await this.#read(async () => {
      switch (area) {
        case 'conversations':
          return { kind: 'conversations', list: await client.supervisedSessions(user) };
        case 'notes':
          return { kind: 'notes', list: await client.supervisedNotes(user) };
        case 'memories':
          return { kind: 'memories', list: await client.supervisedMemories(user) };
        case 'cards':
          return { kind: 'cards', list: await client.supervisedCards(user) };
      }
    });
  }

  /**
   * Allows once or denies one card, bound to the arguments' hash it showed; the card then
   * says what was decided, and focus stays on it. A card changed or decided since is
   * refused by the server, in its words, on the card.
   */
  async #decide(edge: SupervisionEdge, event: DecideEvent): Promise<void> {
    event.stopPropagation();
    const client = this.login?.client;
    const card = event.card;
    if (!client || card.kind !== 'approval' || this.deciding !== null) return;
    const person = this.person;
    const errors = new Map(this.cardErrors);
    errors.delete(card.id);
    this.cardErrors = errors;
    this.deciding = card.id;
    try {
      const allow = event.decision === 'allow';
      const decided = await client.decideSupervisedCard(edge.supervised_id, card.id, allow, card.details.arguments_hash);
      const opened = this.opened;
      if (this.person !== person || opened.kind !== 'cards') return;
      this.opened = { kind: 'cards', list: opened.list.map((each) => (each.id === decided.id ? decided : each)) };
      this.announcement = allow ? strings.supervisedCardAllowed.replace('{name}', edge.supervised_name) : strings.supervisedCardDenied;
      await this.updateComplete;
      this.renderRoot.querySelector<SkaldApprovalCard>(`[data-testid=supervised-card][data-id="${CSS.escape(decided.id)}"] skald-approval-card`)?.focus();
    } catch (error) {
      if (this.person === person) this.cardErrors = new Map(this.cardErrors).set(card.id, describeError(error));
    } finally {
      this.deciding = null;
    }
  }

  async #openConversation(edge: SupervisionEdge, list: readonly Conversation[], conversation: Conversation): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    await this.#read(async () => {
      const rows = await client.supervisedHistory(edge.supervised_id, conversation.id);
      return { kind: 'conversation', list, conversation, transcript: fromHistory(conversation.id, rows, conversation.turn_state) };
    });
  }

  async #openNote(edge: SupervisionEdge, list: readonly NoteSummary[], summary: NoteSummary): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    await this.#read(async () => ({ kind: 'note', list, note: await client.supervisedNote(edge.supervised_id, summary.id) }));
  }

  /** Runs one read (nothing while another runs); what it opened is shown, its heading focused. */
  async #read(read: () => Promise<Opened>): Promise<void> {
    const person = this.person;
    const opened = await this.#action.hold(async () => {
      this.#action.error = '';
      try {
        return await read();
      } catch (error) {
        this.#action.error = describeError(error);
        return null;
      }
    });
    // The page moved to another person meanwhile: this answer is not theirs.
    if (opened === undefined || opened === null || this.person !== person) return;
    this.opened = opened;
    this.announcement = strings.supervisedOpened;
    await this.updateComplete;
    this.renderRoot.querySelector<HTMLElement>('#opened-title')?.focus();
  }
}

const AREA_LABELS = {
  cards: 'supervisedOpenCards',
  conversations: 'supervisedOpenConversations',
  notes: 'supervisedOpenNotes',
  memories: 'supervisedOpenMemories',
} as const satisfies Readonly<Record<AccessArea, string>>;

/** The area what is open belongs to, for the pressed button. */
function areaOf(opened: Opened): AccessArea | null {
  switch (opened.kind) {
    case 'nothing':
      return null;
    case 'conversations':
    case 'conversation':
      return 'conversations';
    case 'notes':
    case 'note':
      return 'notes';
    case 'memories':
      return 'memories';
    case 'cards':
      return 'cards';
  }
}

/** A reply's part: its words as sanitized Markdown, a tool it used in a sentence. */
function renderItem(item: TurnItem): TemplateResult | typeof nothing {
  switch (item.kind) {
    case 'text':
      return item.text === '' ? nothing : html`<skald-markdown .text=${item.text}></skald-markdown>`;
    case 'tool':
      return html`<p class="muted small used">${strings.exportUsed.replace('{call}', describeCall(item.name, item.arguments) ?? toolLabel(item.name))}</p>`;
    case 'note':
      return nothing;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-supervised': SkaldSupervised;
  }
}
