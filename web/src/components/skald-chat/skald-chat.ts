/**
 * One conversation: its history, the reply being written (streamed token by
 * token over the live socket), tool calls, approval cards and questions
 * inline, and the composer with Send / Stop. A new conversation is made on
 * its first message, pinned to the model picked for it, if any.
 *
 * Under a reply whose turn recalled memories, "Used N memories" links to each
 * (state/recall.ts reads them from the recall results, which get no row of their own).
 * A temporary chat says so above the conversation, and is made temporary on its first
 * message; deleting it when the person leaves it is the workspace's part.
 *
 * Files attached by the composer (or dropped on the conversation) go with the next message
 * as documents, once read (skald-attachments); Send waits meanwhile. A message sent with
 * documents shows the person's words and a link to each document, not the text the server
 * put after them (state/attached-documents.ts), and is edited as those words, sent again
 * with the same documents.
 *
 * Owns: the conversation's transcript (state/transcript.ts does the
 * bookkeeping) and its calls: history, send, stop. Never: decides cards
 * itself (CardActionsController does) or keeps anything after it leaves.
 */
import { LitElement, html, nothing, type PropertyValues, type SVGTemplateResult, type TemplateResult } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import { repeat } from 'lit/directives/repeat.js';

import { ApiError, isCancelled } from '../../api/client.js';
import type { AttachedResource, Card, Conversation, LiveEvent, Model, SessionDetail } from '../../api/types.js';
import { isTurnEvent } from '../../api/types.js';
import { CardActionsController } from '../../controllers/card-actions-controller.js';
import { ClipboardController } from '../../controllers/clipboard-controller.js';
import { ConversationController } from '../../controllers/conversation-controller.js';
import { ReadAloudController } from '../../controllers/read-aloud-controller.js';
import { LiveEventsController } from '../../controllers/live-events-controller.js';
import { StoreController } from '../../controllers/store-controller.js';
import { strings } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import { explainTurnError, joinNames } from '../../i18n/turn-errors.js';
import { readSentMessage, type AttachedDocument, type SentMessage } from '../../state/attached-documents.js';
import { conversationMarkdown, markdownFileName, replyText } from '../../state/conversation-markdown.js';
import type { Login } from '../../state/login.js';
import { badgeForModel, badgeForNext, badgeForNextModel } from '../../state/privacy.js';
import { summarisedRecall, usedMemories } from '../../state/recall.js';
import { documentLink } from '../../state/route.js';
import { supervisorDecides } from '../../state/supervision.js';
import {
  acceptSending,
  activeTurn,
  addRetrying,
  addSending,
  addVersion,
  applyEvent,
  dropSending,
  emptyTranscript,
  fromHistory,
  mergeLive,
  type Transcript,
  type Turn,
  type TurnItem,
  turnsIn,
  versionPlace,
  withEarlier,
} from '../../state/transcript.js';
import { controls } from '../../styles/controls.js';
import { dropOverlayStyles } from '../../styles/drop-overlay.js';
import { saveBlob } from '../download.js';
import { dropOverlay } from '../drop-overlay.js';
import { SessionChangedEvent } from '../events.js';
import { iconButton } from '../icon-button.js';
import { copyIcon, leftIcon, paperclipIcon, pencilIcon, regenerateIcon, rightIcon, saveIcon, speakerIcon } from '../icons.js';
import { decidedText } from '../skald-approval-card/skald-approval-card.js';
import { carriesFiles, type AttachmentsChangeEvent, type SkaldAttachments } from '../skald-attachments/skald-attachments.js';
import '../skald-attachments/skald-attachments.js';
import type { SkaldMicrophone, TranscriptEvent } from '../skald-microphone/skald-microphone.js';
import '../skald-microphone/skald-microphone.js';
import type { SkaldComposer } from '../skald-composer/skald-composer.js';
import '../skald-composer/skald-composer.js';
import '../skald-held-changes/skald-held-changes.js';
import '../skald-markdown/skald-markdown.js';
import '../skald-message-edit/skald-message-edit.js';
import '../skald-model-picker/skald-model-picker.js';
import '../skald-privacy-badge/skald-privacy-badge.js';
import '../skald-question-card/skald-question-card.js';
import '../skald-form-card/skald-form-card.js';
import '../skald-sample-card/skald-sample-card.js';
import '../skald-tool-prompts/skald-tool-prompts.js';
import '../skald-temporary-banner/skald-temporary-banner.js';
import '../skald-tool-call/skald-tool-call.js';
import '../skald-used-memories/skald-used-memories.js';
import { styles } from './skald-chat.styles.js';

/** How close to the bottom (px) counts as "following the reply". */
const FOLLOW_SLACK = 80;
/**
 * The turns read at once: a conversation opens on its latest, and earlier ones are read
 * as the person scrolls up to them, so opening costs the same however long it is.
 */
const PAGE_TURNS = 40;
/** Scrolled up to within this many pixels of the top, the earlier turns are read. */
const EARLIER_SLACK = 400;

/**
 * Test hooks: `[data-testid=turn]` per turn (its `data-status`), inside it
 * `[data-testid=user-message]` and `[data-testid=assistant-message]`;
 * `[data-testid=turn-error]` and `[data-testid=retry]`; `[data-testid=chat-title]`; a turn's
 * versions: `[data-testid=edit-message]`, `[data-testid=regenerate]`,
 * `[data-testid=versions]` with `[data-testid=version-previous]` / `version-next`; a message's
 * documents, `[data-testid=message-attachment]` (each a link, its `data-id`); the files to
 * attach, `skald-attachments`; `[data-testid=chat-drop]` while files are dragged over.
 *
 * @summary A conversation with streaming replies, tool cards and the composer.
 * @fires skald-session-changed - a conversation was created, or its state or title changed
 */
@customElement('skald-chat')
export class SkaldChat extends LitElement {
  static override styles = [controls, dropOverlayStyles, styles];

  @property({ attribute: false }) login: Login | null = null;
  /** The conversation, or `null` for a new one not yet sent. */
  @property({ attribute: false }) session: Conversation | null = null;
  /** The models the person's role allows. */
  @property({ attribute: false }) models: readonly Model[] = [];
  /** Whether the model list has been read (an empty list then means: none connected). */
  @property({ type: Boolean }) modelsLoaded = false;
  /** A new conversation is to be temporary: no memory in or out, not listed, deleted when left. */
  @property({ type: Boolean }) temporary = false;
  /** The person's supervisors by name, whom a card their role sends on waits for (§6.2). */
  @property({ attribute: false }) supervisors: readonly string[] = [];

  @state() private transcript: Transcript = emptyTranscript('');
  @state() private loading = false;
  @state() private loadError = '';
  /** The first turn on screen when earlier ones may be read; `null` when it is the first. */
  @state() private earlierFrom: string | null = null;
  @state() private loadingEarlier = false;
  @state() private earlierError = '';
  @state() private sendError = '';
  @state() private draft = '';
  /** Tool servers' resources to attach to the next message. */
  @state() private attached: readonly AttachedResource[] = [];
  /** Documents attached to the next message, read and ready to go. */
  @state() private attachedDocuments: readonly AttachedDocument[] = [];
  /** A file attached is still being uploaded or read: sending waits for it. */
  @state() private attachmentsPending = false;
  /** Files are being dragged over the conversation. */
  @state() private dragging = false;
  @state() private stopping = false;
  /** The model picked for a new conversation (`null`: automatic). */
  @state() private pickedModel: string | null = null;
  /** The open conversation as the server last described it, with the model its next turn would use. */
  @state() private detail: SessionDetail | null = null;
  /** A new pin is on its way to the server. */
  @state() private pinning = false;
  /** The model being pinned while the server is asked; the picker shows it until the answer. */
  @state() private pinningTo: string | null = null;
  @state() private announcement = '';
  /** The turn whose message is being edited, to send again as another version. */
  @state() private editing: string | null = null;

  @query('.log') private log?: HTMLElement;
  @query('skald-composer') private composer?: SkaldComposer;
  @query('skald-attachments') private attachments?: SkaldAttachments;
  @query('skald-microphone') private microphone?: SkaldMicrophone;

  readonly #clipboard = new ClipboardController(this);
  readonly #cards = new CardActionsController(
    this,
    () => this.login?.client ?? null,
    () => this.login?.inbox ?? null,
  );

  constructor() {
    super();
    // Cards shown inline follow the inbox; the transcript follows the live events.
    new StoreController(this, () => this.login?.inbox);
    new StoreController(this, () => this.login?.notices);
    const remember = (event: Event): void => {
      this.#decided = (event as Event & { card: Card }).card.id;
    };
    this.addEventListener('skald-decide', remember);
    this.addEventListener('skald-answer', remember);
    this.addEventListener('skald-form-reply', remember);
    new LiveEventsController(this, () => this.login?.live ?? null, {
      onEvent: (event) => this.#onLive(event),
      onResync: () => void this.#reload(),
    });
    this.#acceptDroppedFiles();
  }

  /** The conversation this view made itself, whose history is already on screen. */
  #createdHere: string | null = null;
  #loadToken = 0;
  #reloadTimer: ReturnType<typeof setTimeout> | undefined;
  #following = true;
  /** The log's scrollTop at its last scroll event, to tell the person scrolling up from the page moving. */
  #lastScrollTop = 0;
  #turnCounter = 0;
  /** Replies read aloud: the speaker buttons, and reading as a reply streams. */
  readonly #readAloud = new ReadAloudController(this, () => this.login);
  /** Hands-free turns: listen, send what was said, read the answer, listen again. */
  readonly #talk = new ConversationController(this, {
    login: () => this.login,
    readAloud: this.#readAloud,
    busy: () => activeTurn(this.transcript) !== undefined,
    stopReply: () => this.#stopAndWait(),
    send: (text) => this.#send(text),
  });
  #alive = new AbortController();
  readonly #resizes = new ResizeObserver(() => this.#follow());
  /** The cards already on screen, so only a new one takes the focus. */
  readonly #cardsSeen = new Set<string>();
  /** A card decided or answered from here, whose removal must not drop the focus to the page. */
  #decided: string | null = null;
  /** After another version is shown: the control to give the focus back to, in the turn at `index`. */
  #focusAfterLoad: { readonly index: number; readonly testid: string } | null = null;
  /**
   * The documents a message sent from here carried, by its turn's key: shown under it until
   * the history, which names them in the message itself, is read.
   */
  readonly #sentWith = new Map<string, readonly AttachedDocument[]>();
  /**
   * Each turn's message as last read, by its key: a message may carry whole documents, and
   * the conversation renders again with every word of a reply.
   */
  readonly #messages = new Map<string, { readonly text: string; readonly message: SentMessage }>();
  /** How deep a drag is in the conversation: `dragleave` fires for every element it leaves. */
  #dragDepth = 0;

  /** Stops the reply being written, if one is; whether there was one. */
  stopReply(): boolean {
    if (this.#talk.on) {
      // Escape ends a hands-free talk, and with it what is being read.
      this.#talk.end();
      return true;
    }
    if (activeTurn(this.transcript) === undefined) return this.#readAloud.stop();
    void this.#stop();
    return true;
  }

  /** Puts the cursor in the message field. */
  override focus(): void {
    void this.updateComplete.then(() => this.composer?.focus());
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('session')) {
      const previous = changed.get('session');
      const id = this.session?.id ?? null;
      if ((previous?.id ?? null) !== id) this.#open(id);
    }
    if (changed.has('temporary') && this.temporary && this.session === null) this.announcement = strings.announceTemporary;
  }

  protected override firstUpdated(): void {
    this.#observeSizes();
  }

  protected override updated(): void {
    this.#follow();
    this.#showNewCards();
    this.#refocusAfterDecision();
    this.#refocusAfterVersion();
  }

  /** The version switcher pressed belongs to a turn now replaced: its twin in the new one takes the focus. */
  #refocusAfterVersion(): void {
    const want = this.#focusAfterLoad;
    if (want === null || this.loading) return;
    this.#focusAfterLoad = null;
    const turn = this.log?.querySelectorAll('[data-testid=turn]')[want.index];
    const control = turn?.querySelector<HTMLButtonElement>(`[data-testid=${want.testid}]:not([disabled])`);
    (control ?? turn?.querySelector<HTMLElement>('[data-testid=versions] button:not([disabled])'))?.focus();
  }

  /**
   * The card just decided is gone: the focus goes to the next card waiting here, or back
   * to the message field — not to the page, where the next Tab would start from the top.
   */
  #refocusAfterDecision(): void {
    const decided = this.#decided;
    const log = this.log;
    if (decided === null || !log) return;
    const cards = [...log.querySelectorAll<CardElement>(CARDS)];
    if (cards.some((el) => el.card?.id === decided)) return;
    this.#decided = null;
    const next = cards[0];
    if (next) next.focus();
    else this.composer?.focus();
  }

  /**
   * Cards and Markdown render after this view does, and the hint and held changes below
   * the log take room from it: follow the growth of the one and the shrinking of the other.
   */
  #observeSizes(): void {
    const column = this.log?.querySelector('.column');
    if (column) this.#resizes.observe(column);
    if (this.log) this.#resizes.observe(this.log);
  }

  /**
   * A card that appeared since the last render is brought whole into view and, unless the
   * person is typing, takes the focus (on the card, not its Allow) and is announced.
   */
  #showNewCards(): void {
    const log = this.log;
    if (!log) return;
    // Every token renders again: look for card elements only when the inbox holds one
    // of this conversation's cards not yet seen.
    const waiting = this.login?.inbox.forSession(this.transcript.sessionId) ?? [];
    if (waiting.every((card) => this.#cardsSeen.has(card.id))) return;
    const shown = [...log.querySelectorAll<CardElement>(CARDS)];
    const fresh = shown.filter((el) => el.card !== null && !this.#cardsSeen.has(el.card.id));
    for (const el of shown) if (el.card) this.#cardsSeen.add(el.card.id);
    const card = fresh.at(-1);
    if (!card) return;
    this.announcement = strings.announceCard;
    void card.updateComplete.then(() => {
      if (!isTyping()) card.focus({ preventScroll: true });
      card.scrollIntoView({ block: 'nearest' });
    });
  }

  /**
   * Keeps the end of the conversation in view while the person reads it. A card waiting
   * there is kept whole when it fits — its title too, not only the lines under it — since
   * nothing more comes until it is answered.
   */
  #follow(): void {
    const log = this.log;
    if (!this.#following || !log) return;
    log.scrollTop = log.scrollHeight;
    const card = this.#waitingCard(log);
    if (card) {
      const box = card.getBoundingClientRect();
      const above = log.getBoundingClientRect().top - box.top;
      if (above > 0 && box.height <= log.clientHeight) log.scrollTop -= above;
    }
    // Moved here, not by the person: the scroll event this causes is no scrolling up.
    this.#lastScrollTop = log.scrollTop;
  }

  /** The last card in the log, if this conversation has one waiting (looked for only then). */
  #waitingCard(log: HTMLElement): Element | undefined {
    if ((this.login?.inbox.forSession(this.transcript.sessionId) ?? []).length === 0) return undefined;
    const cards = log.querySelectorAll(CARDS);
    return cards[cards.length - 1];
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.#alive = new AbortController();
    this.#observeSizes();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearTimeout(this.#reloadTimer);
    // Reads in flight belong to a view that is gone (and maybe to a locked session).
    this.#alive.abort();
    this.#resizes.disconnect();
  }

  #open(id: string | null): void {
    if (id === null || id !== this.#createdHere) this.#talk.end();
    this.#readAloud.stop();
    this.sendError = '';
    this.loadError = '';
    this.stopping = false;
    this.#following = true;
    this.#lastScrollTop = 0;
    this.earlierFrom = null;
    this.earlierError = '';
    if (this.detail?.id !== id) this.detail = null;
    if (id !== null && id === this.#createdHere) return;
    // A read of the conversation left must not land in this one (under load it can
    // answer after the person has moved on).
    this.#loadToken++;
    clearTimeout(this.#reloadTimer);
    if (id === null) {
      this.transcript = emptyTranscript('');
      this.pickedModel = null;
      this.loading = false;
      return;
    }
    this.#createdHere = null;
    this.#sentWith.clear();
    this.#messages.clear();
    this.transcript = emptyTranscript(id);
    void this.#reload(true);
  }

  /**
   * Reads the conversation again. The history read is joined with what the live events
   * showed, unless `replace`: another version was chosen, and nothing on screen belongs to it.
   */
  async #reload(showLoading = false, replace = false): Promise<void> {
    const client = this.login?.client;
    const id = this.session?.id;
    if (!client || !id) return;
    const token = ++this.#loadToken;
    if (showLoading) this.loading = true;
    try {
      const signal = this.#alive.signal;
      const [session, rows] = await Promise.all([
        client.session(id, signal),
        client.history(id, signal, { turns: PAGE_TURNS }),
      ]);
      if (token !== this.#loadToken || this.session?.id !== id) return;
      const loaded = fromHistory(id, rows, session.turn_state);
      this.transcript = replace ? loaded : mergeLive(loaded, this.transcript);
      // Earlier turns read before stay on screen, and so does where reading them stands.
      const first = loaded.turns[0]?.id ?? null;
      if (this.transcript.turns[0]?.id === first) this.earlierFrom = turnsIn(rows) >= PAGE_TURNS ? first : null;
      this.detail = session;
      this.loadError = '';
      if (activeTurn(this.transcript) === undefined) this.stopping = false;
    } catch (error) {
      // Cancelled (this page left, or the session is being locked): nothing to report.
      if (token !== this.#loadToken || this.#alive.signal.aborted || isCancelled(error)) return;
      this.loadError = describeError(error);
    } finally {
      if (token === this.#loadToken) this.loading = false;
    }
  }

  /**
   * Reads the page of turns before the first on screen and puts it above, keeping what the
   * person reads where it is on screen.
   */
  async #loadEarlier(): Promise<void> {
    const client = this.login?.client;
    const id = this.session?.id;
    const before = this.earlierFrom;
    if (!client || !id || before === null || this.loadingEarlier) return;
    this.loadingEarlier = true;
    this.earlierError = '';
    const token = this.#loadToken;
    try {
      const rows = await client.history(id, this.#alive.signal, { turns: PAGE_TURNS, before });
      if (token !== this.#loadToken || this.session?.id !== id || this.earlierFrom !== before) return;
      const log = this.log;
      const fromBottom = log ? log.scrollHeight - log.scrollTop : 0;
      const earlier = fromHistory(id, rows, null, true);
      this.transcript = withEarlier(this.transcript, earlier);
      this.earlierFrom = turnsIn(rows) >= PAGE_TURNS ? (earlier.turns[0]?.id ?? null) : null;
      await this.updateComplete;
      // The turns above took room: the log keeps its distance from the bottom, so what was
      // read stays in view (not every engine anchors the scroll by itself).
      if (log) {
        log.scrollTop = log.scrollHeight - fromBottom;
        this.#lastScrollTop = log.scrollTop;
      }
    } catch (error) {
      if (token !== this.#loadToken || this.#alive.signal.aborted || isCancelled(error)) return;
      this.earlierError = strings.earlierFailed.replace('{reason}', describeError(error));
    } finally {
      this.loadingEarlier = false;
    }
  }

  /** Reads the history again soon, once a burst of events has passed. */
  #reloadSoon(): void {
    clearTimeout(this.#reloadTimer);
    this.#reloadTimer = setTimeout(() => void this.#reload(), 150);
  }

  #onLive(event: LiveEvent): void {
    if (!isTurnEvent(event) || event.session !== this.transcript.sessionId || this.transcript.sessionId === '') return;
    const applied = applyEvent(this.transcript, event);
    this.transcript = applied.transcript;
    const turn = applied.transcript.turns.find((t) => t.id === event.turn);
    if (turn) this.#readAloud.follow(turn, event.type === 'turn_ended');
    if (event.type === 'turn_started') this.announcement = strings.announceReplying;
    if (event.type === 'turn_parked') this.announcement = strings.announceParked;
    if (event.type === 'turn_ended') {
      this.#talk.replyEnded();
      this.stopping = false;
      this.announcement =
        event.status === 'done' ? strings.announceDone : event.status === 'stopped' ? strings.announceStopped : strings.announceError;
      this.#reloadSoon();
      this.dispatchEvent(new SessionChangedEvent(null));
    } else if (applied.reload) {
      this.#reloadSoon();
    }
  }

  /**
   * Whether the person is reading the end of the conversation (then it follows the reply).
   * Only scrolling up leaves the end: the browser moves the log down by itself while the
   * history renders and the hint takes room (scroll anchoring), which must not stop it
   * following — or a card at the end of a conversation just opened stays below.
   */
  #noteFollowing(): void {
    const log = this.log;
    if (!log) return;
    const up = log.scrollTop < this.#lastScrollTop;
    this.#lastScrollTop = log.scrollTop;
    const atEnd = log.scrollHeight - log.scrollTop - log.clientHeight < FOLLOW_SLACK;
    if (atEnd) this.#following = true;
    else if (up) this.#following = false;
    if (up && log.scrollTop < EARLIER_SLACK && this.earlierError === '') void this.#loadEarlier();
  }

  /**
   * Files dragged over the conversation: it shows where they go, and a drop attaches them
   * to the next message. Dragged text or links are left to the browser.
   */
  #acceptDroppedFiles(): void {
    this.addEventListener('dragenter', (event) => {
      if (!carriesFiles(event)) return;
      event.preventDefault();
      this.#dragDepth += 1;
      this.dragging = true;
    });
    this.addEventListener('dragover', (event) => {
      if (!carriesFiles(event)) return;
      // Without this the browser would open the file in place of the app.
      event.preventDefault();
      if (event.dataTransfer) event.dataTransfer.dropEffect = 'copy';
    });
    this.addEventListener('dragleave', (event) => {
      if (!carriesFiles(event)) return;
      this.#dragDepth = Math.max(0, this.#dragDepth - 1);
      if (this.#dragDepth === 0) this.dragging = false;
    });
    this.addEventListener('drop', (event) => {
      if (!carriesFiles(event)) return;
      event.preventDefault();
      this.#dragDepth = 0;
      this.dragging = false;
      this.attachments?.add([...(event.dataTransfer?.files ?? [])]);
    });
  }

  /** Sends `text` as the person's message; whether it went. */
  async #send(text: string): Promise<boolean> {
    const client = this.login?.client;
    if (!client) return false;
    this.#readAloud.prime();
    this.sendError = '';
    this.#following = true;
    let session = this.session;
    const key = `sending-${++this.#turnCounter}`;
    // The documents ready now go; one attached meanwhile waits for the next message.
    const documents = this.attachedDocuments;
    try {
      if (session === null) {
        session = await client.createSession(this.pickedModel ?? undefined, { temporary: this.temporary });
        this.#createdHere = session.id;
        this.transcript = emptyTranscript(session.id);
        this.dispatchEvent(new SessionChangedEvent(session));
      }
      if (session.title === '') {
        // The server titles a conversation after its first message; show that at once.
        this.dispatchEvent(new SessionChangedEvent({ ...session, title: provisionalTitle(text) }));
      }
      this.transcript = addSending(this.transcript, key, text);
      this.#sentWith.set(key, documents);
      this.announcement = strings.announceSent;
      await this.#pin;
      const ids = documents.map((document) => document.id);
      const sent = await client.send(session.id, text, this.attached, ids);
      this.attached = [];
      this.attachments?.clear(ids);
      this.transcript = acceptSending(this.transcript, key, sent.turn);
      this.dispatchEvent(new SessionChangedEvent(null));
      return true;
    } catch (error) {
      // The words go back to the composer; the files attached stay attached.
      this.transcript = dropSending(this.transcript, key);
      this.#sentWith.delete(key);
      this.draft = text;
      if (error instanceof ApiError && error.code === 'held') {
        // The changes it waits on show above the composer; the words stay in it.
        await this.login?.notices.refresh().catch(() => undefined);
        return false;
      }
      this.sendError = error instanceof ApiError && error.code === 'no_model' ? strings.noModel : describeError(error);
      return false;
    }
  }

  /** Stops the reply being written and waits (ten seconds at most) until it has ended. */
  async #stopAndWait(): Promise<void> {
    await this.#stop();
    for (let waited = 0; activeTurn(this.transcript) !== undefined && waited < 10_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async #stop(): Promise<void> {
    const client = this.login?.client;
    const id = this.session?.id;
    if (!client || !id || this.stopping) return;
    this.stopping = true;
    try {
      await client.stop(id);
    } catch (error) {
      this.sendError = describeError(error);
      this.stopping = false;
    }
  }

  /** Tries the failed last turn again: the server answers the same message, which is not sent twice. */
  async #retry(): Promise<void> {
    const client = this.login?.client;
    const id = this.session?.id;
    if (!client || !id || activeTurn(this.transcript) !== undefined) return;
    this.sendError = '';
    this.#following = true;
    const key = `retry-${++this.#turnCounter}`;
    this.transcript = addRetrying(this.transcript, key);
    this.announcement = strings.announceRetrying;
    try {
      const started = await client.retry(id);
      this.transcript = acceptSending(this.transcript, key, started.turn);
      this.dispatchEvent(new SessionChangedEvent(null));
    } catch (error) {
      this.transcript = dropSending(this.transcript, key);
      this.sendError = describeError(error);
    }
  }

  /**
   * Another version of `turn`: its message edited (`text`, sent again with the `documents`
   * it carried), or the same message answered again (`null`). The screen reads as the new
   * path will at once; the old version stays on the server, a click away under the reply.
   */
  async #newVersion(turn: Turn, text: string | null, documents: readonly AttachedDocument[] = []): Promise<void> {
    const client = this.login?.client;
    const id = this.session?.id;
    const turnId = turn.id;
    if (!client || !id || turnId === null || activeTurn(this.transcript) !== undefined) return;
    this.editing = null;
    this.sendError = '';
    this.#following = true;
    const before = this.transcript;
    const key = `version-${++this.#turnCounter}`;
    this.transcript = addVersion(this.transcript, turnId, key, text);
    if (text !== null) this.#sentWith.set(key, documents);
    this.announcement = text === null ? strings.announceRegenerating : strings.announceSent;
    // The button or the field that was used is gone with the turn it belonged to.
    this.composer?.focus();
    try {
      await this.#pin;
      const started =
        text === null
          ? await client.regenerate(id, turnId)
          : await client.resend(id, turnId, text, documents.map((document) => document.id));
      this.transcript = acceptSending(this.transcript, key, started.turn);
      this.dispatchEvent(new SessionChangedEvent(null));
    } catch (error) {
      this.transcript = before;
      this.sendError = describeError(error);
      void this.#reload();
    }
  }

  /** Shows the version `turnId` of the turn at `index`; the focus stays on the switcher. */
  async #showVersion(turnId: string, index: number, testid: string): Promise<void> {
    const client = this.login?.client;
    const id = this.session?.id;
    if (!client || !id) return;
    this.sendError = '';
    try {
      await client.chooseVersion(id, turnId);
      this.#focusAfterLoad = { index, testid };
      await this.#reload(false, true);
      const place = versionPlace(this.detail?.versions ?? [], turnId);
      if (place) {
        this.announcement = strings.announceVersion.replace('{index}', String(place.index)).replace('{count}', String(place.count));
      }
    } catch (error) {
      this.sendError = describeError(error);
    }
  }

  /** A pin on its way to the server: a message sent meanwhile waits for it, so it goes to the model picked. */
  #pin: Promise<void> = Promise.resolve();

  /** The person picked another model: for a new conversation, remembered; for one under way, pinned now. */
  #pick(model: string | null): Promise<void> {
    this.#pin = this.#pinNow(model);
    return this.#pin;
  }

  async #pinNow(model: string | null): Promise<void> {
    const client = this.login?.client;
    const id = this.session?.id;
    if (!client || !id) {
      this.pickedModel = model;
      return;
    }
    this.pinning = true;
    this.pinningTo = model;
    this.sendError = '';
    try {
      await client.pinModel(id, model);
      this.detail = await client.session(id, this.#alive.signal);
      this.announcement = model === null ? strings.announceModelAutomatic : strings.announceModel.replace('{model}', model);
      this.dispatchEvent(new SessionChangedEvent(null));
    } catch (error) {
      this.sendError = describeError(error);
    } finally {
      this.pinning = false;
    }
  }

  override render(): TemplateResult {
    const session = this.session;
    const detail = session !== null && this.detail?.id === session.id ? this.detail : null;
    const pinned = session ? (detail ?? session).model : this.pickedModel;
    // Once the server has said which model the next turn would use, that is exact; before, a careful guess.
    const next = detail !== null ? badgeForNextModel(detail.next_model) : badgeForNext(pinned, this.models);
    const busy = activeTurn(this.transcript) !== undefined;
    const parked = this.transcript.turns.some((t) => t.status === 'parked');
    const noModels = this.modelsLoaded && this.models.length === 0;
    const held = (this.login?.notices.held.length ?? 0) > 0;
    const temporary = session?.temporary ?? this.temporary;
    return html`
      <header class="bar">
        <h2 class="title" data-testid="chat-title" id="chat-title">${session?.title || (temporary ? strings.temporaryChat : strings.newChat)}</h2>
        <div class="bar-tools">
          <skald-model-picker
            .models=${this.models}
            .value=${this.pinning ? this.pinningTo : pinned}
            ?disabled=${busy || this.pinning}
            @skald-model-change=${(e: { model: string | null }) => void this.#pick(e.model)}
          ></skald-model-picker>
          <skald-privacy-badge .badge=${next}></skald-privacy-badge>
          ${this.transcript.turns.length > 0
            ? iconButton({ testid: 'export-conversation', label: strings.exportConversation, icon: saveIcon, onClick: () => void this.#saveMarkdown() })
            : nothing}
        </div>
      </header>
      <div class="log" role="log" aria-labelledby="chat-title" aria-busy=${busy ? 'true' : 'false'} tabindex="-1" @scroll=${this.#noteFollowing}>
        <div class="column">
          ${temporary ? html`<skald-temporary-banner></skald-temporary-banner>` : nothing}
          ${this.loading ? html`<p class="hint center" role="status">${strings.loading}</p>` : nothing}
          ${this.loadError
            ? html`<div class="notice error" role="alert">
                <p>${this.loadError}</p>
                <button type="button" @click=${() => void this.#reload(true)}>${strings.retry}</button>
              </div>`
            : nothing}
          ${!this.loading && this.transcript.turns.length === 0 && !this.loadError ? this.#renderEmpty(noModels) : nothing}
          ${this.#renderEarlier()}
          ${repeat(
            this.transcript.turns,
            (turn) => turn.key,
            (turn, index) => this.#renderTurn(turn, index, this.transcript.turns[index - 1] ?? null, { busy, parked }),
          )}
          ${this.#renderLooseCards()}
        </div>
      </div>
      <div class="bottom">
        <div class="column">
          ${this.sendError ? html`<p class="notice error" role="alert" data-testid="send-error">${this.sendError}</p>` : nothing}
          ${this.#readAloud.problem
            ? html`<p class="notice error" role="alert" data-testid="read-aloud-error">${strings.readAloudFailed.replace('{reason}', this.#readAloud.problem)}</p>`
            : nothing}
          ${parked && !busy ? html`<p class="hint parked">${strings.parkedHint}</p>` : nothing}
          <skald-held-changes .login=${this.login}></skald-held-changes>
          <skald-tool-prompts
            .login=${this.login}
            .attached=${this.attached}
            @skald-attach=${(e: { resources: readonly AttachedResource[] }) => (this.attached = e.resources)}
            @skald-use-prompt=${(e: { text: string }) => {
              this.draft = e.text;
              this.composer?.focus();
            }}
          ></skald-tool-prompts>
          <skald-composer
            .value=${this.draft}
            ?busy=${busy}
            ?disabled=${noModels || this.stopping || held}
            .waiting=${this.attachmentsPending ? strings.attachmentsWait : ''}
            @skald-send=${(e: { text: string }) => {
              this.draft = '';
              void this.#send(e.text);
            }}
            @skald-stop=${() => void this.#stop()}
          >
            <skald-attachments
              slot="attachments"
              .login=${this.login}
              @skald-attachments-change=${(e: AttachmentsChangeEvent) => {
                this.attachedDocuments = e.documents;
                this.attachmentsPending = e.pending;
              }}
            ></skald-attachments>
            <skald-microphone
              slot="attachments"
              .login=${this.login}
              ?disabled=${noModels || held}
              .talk=${this.#talk.phase}
              .talkProblem=${this.#talk.problem}
              @skald-talk-toggle=${() => void this.#talk.toggle()}
              @skald-listening=${() => this.#readAloud.stop()}
              @skald-transcript=${(e: TranscriptEvent) => {
                // What was said joins what is already written, for the person to check and
                // send — or, as they chose, goes at once.
                const now = this.composer?.value ?? this.draft;
                const text = now.trim() === '' ? e.text : `${now.trimEnd()} ${e.text}`;
                if (this.login?.voice.autoSend && !busy && !(noModels || this.stopping || held)) {
                  this.draft = '';
                  void this.#send(text);
                  return;
                }
                this.draft = text;
                this.composer?.focus();
              }}
            ></skald-microphone>
          </skald-composer>
          <p class="fineprint">${strings.composerFineprint}</p>
        </div>
      </div>
      ${this.dragging
        ? dropOverlay({ icon: paperclipIcon, title: strings.attachDropHere, detail: strings.attachDropPrivate, testid: 'chat-drop' })
        : nothing}
      <p class="visually-hidden" role="status" aria-live="polite">${this.announcement}</p>
    `;
  }

  #renderEmpty(noModels: boolean): TemplateResult {
    if (noModels) {
      return html`<div class="empty">
        <h3>${strings.noModelTitle}</h3>
        <p>${this.login?.me.role?.manage_instance ? strings.noModelAdmin : strings.noModel}</p>
      </div>`;
    }
    return html`<div class="empty">
      <h3>${strings.emptyTitle.replace('{name}', this.login?.me.user.name ?? '')}</h3>
      <p>${strings.emptyLead}</p>
    </div>`;
  }

  #renderTurn(
    turn: Turn,
    index: number,
    previous: Turn | null,
    conversation: { readonly busy: boolean; readonly parked: boolean },
  ): TemplateResult {
    const last = index === this.transcript.turns.length - 1;
    const afterError = previous?.status === 'error';
    // The model is named where it changed (and on hover everywhere), not under every reply.
    const modelChanged = turn.model !== null && turn.model !== (previous?.model ?? null);
    const ended = turn.status === 'done' || turn.status === 'stopped' || turn.status === 'error';
    const hasText = turn.items.some((item) => item.kind === 'text' && item.text !== '');
    return html`<article class="turn" data-testid="turn" data-status=${turn.status} aria-label=${strings.turnLabel}>
      ${turn.userText === null && afterError ? html`<p class="note" data-testid="retried">${strings.turnRetried}</p>` : nothing}
      ${turn.userText !== null ? this.#renderUser(turn, turn.userText, ended && !conversation.busy) : nothing}
      <div class="assistant" data-testid="assistant-message">
        <h3 class="visually-hidden">${strings.assistantSaid}</h3>
        ${turn.items.map((item) => this.#renderItem(item, ended))}
        ${(turn.status === 'running' || turn.status === 'sending') && !hasText
          ? html`<p class="thinking" aria-hidden="true"><span></span><span></span><span></span></p>`
          : nothing}
        <skald-used-memories .memories=${usedMemories(turn.items)}></skald-used-memories>
        ${turn.status === 'stopped' ? html`<p class="stopped" data-testid="turn-stopped">${strings.turnStopped}</p>` : nothing}
        ${turn.status === 'error'
          ? html`<div class="notice error" role="alert" data-testid="turn-error">
              ${this.#renderFailure(turn)}
              ${last ? html`<button type="button" data-testid="retry" @click=${() => void this.#retry()}>${strings.retry}</button>` : nothing}
            </div>`
          : nothing}
      </div>
      ${this.#renderMeta(turn, index, { ended, hasText, modelChanged, ...conversation })}
    </article>`;
  }

  /**
   * The person's message — their words, and a link to each document sent with it — with
   * Edit while nothing is being written; or the field editing the words.
   */
  #renderUser(turn: Turn, text: string, mayEdit: boolean): TemplateResult {
    const message = this.#read(turn.key, text);
    const documents = message.documents.length > 0 ? message.documents : (this.#sentWith.get(turn.key) ?? []);
    if (this.editing !== null && this.editing === turn.id) {
      return html`<div class="user">
        <skald-message-edit
          .text=${message.words}
          @skald-resend=${(e: { text: string }) => void this.#newVersion(turn, e.text, documents)}
          @skald-edit-cancel=${() => {
            this.editing = null;
            void this.updateComplete.then(() => this.#turnControl(turn, 'edit-message')?.focus());
          }}
        ></skald-message-edit>
      </div>`;
    }
    return html`<div class="user">
      <h3 class="visually-hidden">${strings.youSaid}</h3>
      <div class="bubble" data-testid="user-message">${message.words}</div>
      ${documents.length > 0
        ? html`<ul class="message-attachments" aria-label=${strings.messageAttachmentsLabel}>
            ${documents.map(
              (document) => html`<li>
                <a class="message-attachment" href=${documentLink(document.id)} data-testid="message-attachment" data-id=${document.id}
                  >${paperclipIcon}<span>${document.name}</span></a
                >
              </li>`,
            )}
          </ul>`
        : nothing}
      ${mayEdit && turn.id !== null
        ? iconButton({ testid: 'edit-message', label: strings.editMessage, icon: pencilIcon, className: 'edit-message', onClick: () => (this.editing = turn.id) })
        : nothing}
    </div>`;
  }

  /** The message `text` of the turn with key `key`, read once for as long as it stays the same. */
  #read(key: string, text: string): SentMessage {
    const known = this.#messages.get(key);
    if (known?.text === text) return known.message;
    const message = readSentMessage(text);
    this.#messages.set(key, { text, message });
    return message;
  }

  /** A control of the turn with key `turn.key`, found on screen. */
  #turnControl(turn: Turn, testid: string): HTMLElement | null {
    const index = this.transcript.turns.indexOf(turn);
    const element = this.log?.querySelectorAll('[data-testid=turn]')[index];
    return element?.querySelector<HTMLElement>(`[data-testid=${testid}]`) ?? null;
  }

  /** One arrow of a turn's version switcher: shows version `target`, off at either end. */
  #versionButton(
    testid: string,
    label: string,
    icon: SVGTemplateResult,
    target: string | null,
    index: number,
    switching: boolean,
  ): TemplateResult {
    return iconButton({
      testid,
      label,
      icon,
      disabled: target === null || switching,
      onClick: () => target && void this.#showVersion(target, index, testid),
    });
  }

  /** Under the reply: its privacy, the model where it changed, copy, regenerate, and its versions. */
  #renderMeta(
    turn: Turn,
    index: number,
    at: {
      readonly ended: boolean;
      readonly hasText: boolean;
      readonly modelChanged: boolean;
      readonly busy: boolean;
      readonly parked: boolean;
    },
  ): TemplateResult | typeof nothing {
    const place = versionPlace(this.detail?.versions ?? [], turn.id);
    const mayRegenerate = at.ended && turn.status !== 'error' && !at.busy && turn.id !== null;
    if (turn.model === null && place === null && !mayRegenerate) return nothing;
    const switching = at.busy || at.parked;
    const label = place ? strings.versionOf.replace('{index}', String(place.index)).replace('{count}', String(place.count)) : '';
    return html`<p class="turn-meta" title=${turn.model !== null ? strings.turnModel.replace('{model}', turn.model) : nothing}>
      ${place
        ? html`<span class="versions" role="group" aria-label=${label} data-testid="versions">
            ${this.#versionButton('version-previous', strings.versionPrevious, leftIcon, place.previous, index, switching)}
            <span aria-hidden="true" data-testid="version-label">${place.index} / ${place.count}</span>
            ${this.#versionButton('version-next', strings.versionNext, rightIcon, place.next, index, switching)}
          </span>`
        : nothing}
      ${turn.model !== null ? html`<skald-privacy-badge .badge=${badgeForModel(turn.model, this.models)}></skald-privacy-badge>` : nothing}
      ${at.modelChanged ? html`<span data-testid="turn-model">${turn.model}</span>` : nothing}
      ${at.ended && at.hasText ? this.#renderCopy(turn) : nothing}
      ${at.hasText && (at.ended || this.#readAloud.reading === turn.id) ? this.#renderReadAloud(turn) : nothing}
      ${mayRegenerate
        ? iconButton({ testid: 'regenerate', label: strings.regenerate, icon: regenerateIcon, className: 'regenerate', onClick: () => void this.#newVersion(turn, null) })
        : nothing}
    </p>`;
  }

  #renderFailure(turn: Turn): TemplateResult {
    const me = this.login?.me;
    const said = explainTurnError(turn.error, { manages: me?.role?.manage_instance ?? false, administrators: me?.administrators ?? [] });
    return html`<p data-testid="turn-error-what">${said.what}</p>
      ${said.next ? html`<p data-testid="turn-error-next">${said.next}</p>` : nothing}
      ${said.detail
        ? html`<details class="failure-detail">
            <summary>${strings.failDetail}</summary>
            <p data-testid="turn-error-detail">${said.detail}</p>
          </details>`
        : nothing}`;
  }

  /**
   * A call refused because the person's role may not approve it: who could allow it, by
   * name, and how to ask them (in person, today).
   */
  #renderWhoMayAllow(): TemplateResult | typeof nothing {
    const me = this.login?.me;
    if (!me || me.role?.may_approve !== false) return nothing;
    const names = me.approvers.filter((name) => name !== me.user.name);
    if (names.length === 0) return nothing;
    return html`<p class="note" data-testid="ask-approver">${strings.askApprover.replace('{names}', joinNames(names))}</p>`;
  }

  #renderCopy(turn: Turn): TemplateResult {
    const copied = this.#clipboard.copied === turn.key;
    return html`<button
      type="button"
      class="quiet icon-button copy-reply"
      data-testid="copy-reply"
      title=${strings.copyReply}
      aria-label=${copied ? strings.copiedReply : strings.copyReply}
      @click=${() => void this.#clipboard.copy(replyText(turn), turn.key)}
    >
      ${copyIcon}${copied ? html`<span class="copied">${strings.copied}</span>` : nothing}
    </button>`;
  }

  #renderReadAloud(turn: Turn): TemplateResult {
    const reading = this.#readAloud.reading !== null && this.#readAloud.reading === (turn.id ?? turn.key);
    return iconButton({
      testid: 'read-aloud',
      label: reading ? strings.readAloudStop : strings.readAloud,
      icon: speakerIcon,
      className: `read-aloud${reading ? ' reading' : ''}`,
      pressed: reading,
      onClick: () => this.#readAloud.toggle(turn),
    });
  }

  /** Starts or stops listening (the shortcut). */
  toggleMicrophone(): void {
    this.microphone?.toggle();
  }

  /** Above the first turn on screen when earlier ones may be read: a button that reads them. */
  #renderEarlier(): TemplateResult | typeof nothing {
    if (this.earlierFrom === null) return nothing;
    return html`<div class="earlier">
      ${this.earlierError ? html`<p class="notice error" role="alert" data-testid="earlier-error">${this.earlierError}</p>` : nothing}
      <button type="button" data-testid="earlier" ?disabled=${this.loadingEarlier} @click=${() => void this.#loadEarlier()}>
        ${this.loadingEarlier ? strings.earlierLoading : strings.earlierMessages}
      </button>
    </div>`;
  }

  /**
   * Saves the conversation as a Markdown file, made here in memory: all of it, its turns
   * not yet read on screen too.
   */
  async #saveMarkdown(): Promise<void> {
    const title = this.session?.title ?? '';
    let transcript = this.transcript;
    const client = this.login?.client;
    if (this.earlierFrom !== null && client) {
      try {
        const rows = await client.history(transcript.sessionId, this.#alive.signal);
        transcript = withEarlier(transcript, fromHistory(transcript.sessionId, rows, null, true));
      } catch (error) {
        if (this.#alive.signal.aborted || isCancelled(error)) return;
        this.sendError = describeError(error);
        return;
      }
    }
    const blob = new Blob([conversationMarkdown(title, transcript, new Date())], { type: 'text/markdown' });
    const filename = markdownFileName(title);
    saveBlob(blob, filename, this.renderRoot);
    this.announcement = strings.exportConversationDone.replace('{file}', filename);
  }

  #renderItem(item: TurnItem, ended: boolean): TemplateResult | typeof nothing {
    switch (item.kind) {
      case 'text':
        return html`<skald-markdown .text=${item.text}></skald-markdown>`;
      case 'note':
        return html`<p class="note">
          ${item.note === 'retrying'
            ? strings.noteRetrying.replace('{attempt}', item.detail)
            : item.note === 'fallback'
              ? strings.noteFallback.replace('{model}', item.detail)
              : strings.noteCompacted}
        </p>`;
      case 'tool': {
        const card = this.login?.inbox.forCall(item.id);
        // What a recall found is told once, under the reply ("Used 2 memories"), not as a row per recall.
        if (card === undefined && summarisedRecall(item, ended)) return nothing;
        // Decided by the person's supervisor: the conversation says who.
        const decided = card === undefined ? this.login?.inbox.decidedFor(item.id) : undefined;
        return html`<skald-tool-call .item=${item} .client=${this.login?.client ?? null} ?waiting=${card !== undefined} ?ended=${ended}></skald-tool-call>
          ${card ? this.#renderCard(card) : nothing}
          ${decided?.kind === 'approval'
            ? html`<p class="note" data-testid="decided-by">${decidedText(decided)}</p>`
            : item.status === 'denied'
              ? this.#renderWhoMayAllow()
              : nothing}`;
      }
    }
  }

  /** Cards of this conversation not tied to a call on screen (e.g. a question). */
  #renderLooseCards(): TemplateResult | typeof nothing {
    const id = this.transcript.sessionId;
    if (!id || !this.login) return nothing;
    const shownCalls = new Set(
      this.transcript.turns.flatMap((turn) => turn.items.flatMap((item) => (item.kind === 'tool' ? [item.id] : []))),
    );
    const loose = this.login.inbox.forSession(id).filter((card) => !shownCalls.has(card.details.call_id ?? ''));
    return loose.length === 0 ? nothing : html`${loose.map((card) => this.#renderCard(card))}`;
  }

  #renderCard(card: Card): TemplateResult {
    const busy = this.#cards.busy(card.id);
    const error = this.#cards.error(card.id);
    return card.kind === 'approval'
      ? html`<skald-approval-card
          .card=${card}
          ?mayApprove=${this.login?.me.role?.may_approve ?? false}
          .supervisors=${supervisorDecides(card, this.login?.me.role ?? null) ? this.supervisors : null}
          ?busy=${busy}
          .error=${error}
        ></skald-approval-card>`
      : card.kind === 'form'
        ? html`<skald-form-card .card=${card} ?busy=${busy} .error=${error}></skald-form-card>`
        : card.kind === 'sample'
          ? html`<skald-sample-card .card=${card} ?busy=${busy} .error=${error}></skald-sample-card>`
          : html`<skald-question-card .card=${card} ?busy=${busy} .error=${error}></skald-question-card>`;
  }
}

/** Every kind of card the log shows, in document order. */
const CARDS = 'skald-approval-card, skald-question-card, skald-form-card, skald-sample-card';
type CardElement = HTMLElementTagNameMap['skald-approval-card' | 'skald-question-card' | 'skald-form-card' | 'skald-sample-card'];

/** Whether the person is typing into a text field (through shadow roots): not to be interrupted. */
function isTyping(): boolean {
  let active = document.activeElement;
  while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
  return (active instanceof HTMLTextAreaElement || active instanceof HTMLInputElement) && active.value !== '';
}

/** The first line of a message, as the server will title the conversation with it. */
function provisionalTitle(text: string): string {
  const line = text.split('\n').find((l) => l.trim() !== '')?.trim() ?? '';
  return line.length > 60 ? `${line.slice(0, 60)}…` : line;
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-chat': SkaldChat;
  }
}
