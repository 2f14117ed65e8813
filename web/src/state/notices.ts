/**
 * Notices (§3): a change someone else made to what decides where my words
 * go or how they are handled — a model provider, an agent's prompt — kept
 * until I mark it seen. One store per login, beside the inbox; the
 * navigation counts both.
 *
 * The store reads `GET /api/notices` at login, when asked, whenever the
 * socket says a notice was written (`notice`, wired in login.ts), and, as a
 * fallback, every few minutes while the page is visible. `viewNotice` is
 * pure: it turns a notice's body into what the page says about it.
 *
 * Dispatches `change` whenever the list changes; components subscribe
 * through StoreController.
 */
import type { ApiClient } from '../api/client.js';
import { isRecord, type Notice } from '../api/types.js';

/** How often notices are read again while the page is visible, in case a socket event was missed. */
const POLL_MS = 5 * 60_000;

export class NoticesStore extends EventTarget {
  #notices: readonly Notice[] = [];
  #loaded = false;
  readonly #client: ApiClient;
  #refreshing: Promise<void> | null = null;
  #again: Promise<void> | null = null;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(client: ApiClient) {
    super();
    this.#client = client;
  }

  /** Unseen notices, oldest first. */
  get notices(): readonly Notice[] {
    return this.#notices;
  }

  get loaded(): boolean {
    return this.#loaded;
  }

  /** Reads the notices now, then again every few minutes while the page is visible. */
  start(): void {
    void this.refresh().catch(() => undefined);
    clearInterval(this.#timer);
    this.#timer = setInterval(() => {
      if (document.visibilityState === 'visible') void this.refresh().catch(() => undefined);
    }, POLL_MS);
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /**
   * Reads the notices again. A call while a read is under way shares it and
   * then reads once more, since the notice it was called for may have been
   * written after that read began.
   */
  refresh(): Promise<void> {
    if (this.#refreshing) {
      this.#again ??= this.#refreshing.catch(() => undefined).then(() => {
        this.#again = null;
        return this.refresh();
      });
      return this.#again;
    }
    this.#refreshing = this.#client
      .notices()
      .then((notices) => {
        this.#notices = notices;
        this.#loaded = true;
        this.#changed();
      })
      .finally(() => {
        this.#refreshing = null;
      });
    return this.#refreshing;
  }

  /** Changes that hold my turns until I decide on them, oldest first. */
  get held(): readonly Notice[] {
    return this.#notices.filter((notice) => notice.holds === true);
  }

  /** Marks every notice shown so far as seen; those that hold my turns stay. */
  async markAllSeen(): Promise<void> {
    const last = this.#notices[this.#notices.length - 1];
    if (last === undefined) return;
    await this.#client.markNoticesSeen(last.id);
    this.#notices = this.#notices.filter((notice) => notice.id > last.id || notice.holds === true);
    this.#changed();
  }

  /**
   * Continues with a held change, or without it; then reads the notices
   * again, since deciding one may settle or reveal others.
   */
  async decide(id: number, decision: 'accept' | 'decline'): Promise<void> {
    try {
      await this.#client.decideNotice(id, decision);
    } finally {
      await this.refresh().catch(() => undefined);
    }
  }

  #changed(): void {
    this.dispatchEvent(new Event('change'));
  }
}

/** What changed, in the terms the page words. */
export type NoticeChange = 'name' | 'address' | 'key' | 'trust' | 'models';

export interface NoticeView {
  readonly id: number;
  readonly kind:
    | 'provider_added'
    | 'provider_changed'
    | 'provider_deleted'
    | 'agent_changed'
    | 'held_change'
    | 'declined_change'
    | 'change_applied'
    | 'job_missed'
    | 'supervision_requested'
    | 'supervision_ended'
    | 'other';
  /** For a held or applied change: what changed, in the server's words. */
  readonly what: string | null;
  /** For a held or applied change: the shared database does not say who made it, or its audit was altered. */
  readonly outside: boolean;
  /** Who made the change, when known. */
  readonly who: string | null;
  /** The provider's or agent's name, when known; for supervision, the supervisor's. */
  readonly subject: string | null;
  readonly changes: readonly NoticeChange[];
  /** For agents: `app` (changed in Skald), `disk` (its files were edited outside Skald), … */
  readonly source: string | null;
  /** For a job missed while Skald was closed: how many times (at least), the last one, and whether it ran once now. */
  readonly missed: { readonly count: number; readonly more: boolean; readonly last: string; readonly ran: boolean } | null;
  readonly at: string;
}

/** Names the page can look a notice's ids up in. */
export interface NoticeNames {
  /** Provider id → name (from the models the person may use), for a notice without `provider_name`. */
  readonly providers: ReadonlyMap<string, string>;
  /** Agent id → name. */
  readonly agents: ReadonlyMap<string, string>;
}

/**
 * What a notice says, with its ids turned into names where they are known.
 *
 * Provider notices carry the provider's current `provider_name`, and `name`
 * only when it was renamed; every notice names who made the change in
 * `changed_by` `{id, name}` (null for an agent edited on disk), but for
 * supervision's, which name the supervisor (`supervisor`) and who asked for
 * the edge or ended it (`by`).
 */
export function viewNotice(notice: Notice, names: NoticeNames): NoticeView {
  const body = isRecord(notice.body) ? notice.body : {};
  const text = (key: string): string | null => {
    const value = body[key];
    return typeof value === 'string' && value !== '' ? value : null;
  };
  const changedBy = body['changed_by'];
  const who = isRecord(changedBy) && typeof changedBy['name'] === 'string' && changedBy['name'] !== '' ? changedBy['name'] : null;
  const base = {
    id: notice.id,
    who,
    at: notice.created_at,
    changes: [] as NoticeChange[],
    source: null,
    what: null,
    outside: false,
    missed: null,
  };
  const providerName = (): string | null => {
    const id = text('provider');
    return text('provider_name') ?? text('name') ?? (id === null ? null : (names.providers.get(id) ?? null));
  };
  switch (notice.kind) {
    case 'provider_added':
    case 'provider_deleted':
      return { ...base, kind: notice.kind, subject: providerName() };
    case 'provider_changed': {
      const changes: NoticeChange[] = [];
      if (text('name') !== null) changes.push('name');
      if (text('base_url') !== null) changes.push('address');
      if (body['key_changed'] === true) changes.push('key');
      if (typeof body['trusted_lan'] === 'boolean') changes.push('trust');
      if (body['models_changed'] === true) changes.push('models');
      return { ...base, kind: 'provider_changed', subject: providerName(), changes };
    }
    case 'agent_changed': {
      const id = text('agent');
      return { ...base, kind: 'agent_changed', subject: id === null ? null : (names.agents.get(id) ?? id), source: text('source') };
    }
    case 'held_change':
    case 'declined_change':
    case 'change_applied':
      return { ...base, kind: notice.kind, subject: null, what: text('what'), outside: body['outside_skald'] === true };
    case 'supervision_requested':
    case 'supervision_ended':
      // `by` names who asked for the edge, or ended it; `supervisor` whom it is for.
      return { ...base, kind: notice.kind, who: text('by'), subject: text('supervisor') };
    case 'job_missed': {
      const count = typeof body['count'] === 'number' ? body['count'] : 1;
      const missed = { count, more: body['more'] === true, last: text('last') ?? '', ran: body['ran'] === true };
      return { ...base, kind: 'job_missed', subject: null, missed };
    }
    default:
      return { ...base, kind: 'other', subject: null };
  }
}
