/**
 * The typed client for Skald's HTTP API (see shared/contract.md).
 *
 * Owns: the bearer token for the session, request and response shapes, and
 * turning every failure into an `ApiError`. Never: stores the token anywhere
 * but this object's private field, nor puts it in a URL, nor logs it.
 *
 * One client holds one bearer: the launch token (setup, the picker, login,
 * enrolment, recovery) or, after a login, a person's session token
 * (`withToken`). Dropping the session client forgets the session.
 */
import {
  isCard,
  type AccessEntry,
  isDownloadStatus,
  isRecord,
  isUnlocked,
  type AgentDetail,
  type AttachedResource,
  type AgentList,
  type ApprovalCard,
  type ApprovalRule,
  type AuditEntry,
  type BackupList,
  type BackupSchedule,
  type BackupScheduleBody,
  type BackupStarted,
  type Card,
  type Catalogue,
  type Conversation,
  type DetectedServer,
  type Document,
  type DocumentHit,
  type DocumentPool,
  type DocumentText,
  type DownloadStatus,
  type Enrolment,
  type EnrolmentCheck,
  type HistoryRow,
  type Job,
  type JobChange,
  type JobRun,
  type NewJob,
  type Snooze,
  type SnoozeRequest,
  type InstalledModel,
  type LocalModelsReport,
  type McpImported,
  type McpServer,
  type McpServerPatch,
  type Me,
  type Memory,
  type MemoryChange,
  type MemoryErased,
  type MemorySearch,
  type MemorySubject,
  type MessageHit,
  type MySupervision,
  type NewBackup,
  type NewMcpServer,
  type NewMemoryBody,
  type Model,
  type Note,
  type NoteHit,
  type NoteSummary,
  type Notice,
  type Person,
  type PersonalRule,
  type Pool,
  type PersonRestored,
  type PersonUsage,
  type Preview,
  type PrivacyReport,
  type Provider,
  type ProviderPatch,
  type RestorePersonBody,
  type RoleDetail,
  type RolePatch,
  type RuleInput,
  type SessionDetail,
  type SupervisionEdge,
  type ToolPrompt,
  type ToolResource,
  type Unlocked,
  type SpeechModel,
  type SpeechVoice,
  type Transcript,
  type VoiceCatalogue,
  type VoiceOverview,
} from './types.js';

/**
 * What `GET /api/memories` narrows to: a pool, a subject (`self`, `instance` or a
 * member's id), words to match, how many.
 */
export interface MemoryFilter {
  readonly pool?: Pool;
  readonly subject?: string;
  readonly q?: string;
  readonly limit?: number;
}

/** The body of `GET /api/health`. */
export interface Health {
  readonly status: string;
  readonly version: string;
}

/**
 * Why a call failed: the server's `{"error":{"code","message"}}` body, or one
 * of the client's own codes when there was no such body.
 *
 * Client codes: `network` (no answer, status 0), `aborted` (status 0),
 * `bad_response` (an answer that is not the JSON the contract promises),
 * `http_<status>` (an error status without an error body).
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';

  constructor(
    /** Stable, machine-readable; match on this, not on `message`. */
    readonly code: string,
    /** For people: already safe to show. */
    message: string,
    /** The HTTP status, or 0 when no response arrived. */
    readonly status: number,
    /** How many seconds the server asked to wait before trying again (`Retry-After`), if it said. */
    readonly retryAfter: number | null = null,
  ) {
    super(message);
  }
}

/** Whether `error` is a request that was cancelled here rather than answered. */
export function isCancelled(error: unknown): boolean {
  return error instanceof ApiError && error.code === 'aborted';
}

/** A `Retry-After` header in seconds (the server sends whole seconds, never a date). */
function retryAfterOf(response: Response): number | null {
  const seconds = Number(response.headers.get('Retry-After') ?? '');
  return Number.isFinite(seconds) && seconds > 0 ? seconds : null;
}

/** What the constructor may be given besides the token; for tests and embedding. */
export interface ApiClientOptions {
  /** Origin and prefix to resolve `/api/...` against; the page's origin by default. */
  readonly baseUrl?: string;
  readonly fetch?: typeof fetch;
}

/** Milestones the page reports to the server's log. */
export type ClientEvent = 'rendered';

/** How `uploadDocument` treats a file whose bytes are kept already. */
export interface UploadOptions {
  /** The document kept is the answer (`existing=use`), rather than a 409 `duplicate_document`. */
  readonly useExisting?: boolean;
}

/** What `POST /api/providers` takes. */
export interface NewProvider {
  readonly name: string;
  readonly kind: string;
  readonly base_url: string;
  readonly api_key?: string;
}

/** The subprotocol that names Skald's live-event protocol on `/api/ws`. */
export const LIVE_PROTOCOL = 'skald.v1';

/** Talks to one Skald server with one bearer token. */
export class ApiClient {
  // An ES private field: not enumerable, not reachable from outside, not
  // serialised by accident.
  readonly #token: string;
  readonly #baseUrl: string;
  readonly #fetch: typeof fetch;
  readonly #options: ApiClientOptions;
  // Aborted when this bearer is being locked: what is still in flight, or would start,
  // can only be refused by the server now, so it ends here without being sent.
  readonly #ending = new AbortController();

  constructor(token: string, options: ApiClientOptions = {}) {
    this.#token = token;
    this.#options = options;
    this.#baseUrl = options.baseUrl ?? window.location.origin;
    // Bound, because a bare `fetch` called as a method throws "Illegal invocation".
    this.#fetch = options.fetch ?? window.fetch.bind(window);
  }

  /** A client for the same server with another bearer (a session token after login). */
  withToken(token: string): ApiClient {
    return new ApiClient(token, this.#options);
  }

  /**
   * Opens the live-event socket. A browser cannot set headers on a WebSocket,
   * so the bearer rides in the subprotocol list, base64url without padding.
   */
  openLiveSocket(): WebSocket {
    const url = new URL('/api/ws', this.#baseUrl);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    return new WebSocket(url, [LIVE_PROTOCOL, `skald.bearer.${base64Url(this.#token)}`]);
  }

  // ---- launch-token routes -------------------------------------------------

  /** `GET /api/instance`: whether the first administrator still has to be made. */
  async instance(signal?: AbortSignal): Promise<{ readonly setup_required: boolean }> {
    const body = await this.#request('GET', '/api/instance', signal);
    if (!isRecord(body) || typeof body['setup_required'] !== 'boolean') throw unexpected('instance');
    return { setup_required: body['setup_required'] };
  }

  /** `POST /api/setup`: the first administrator, logged in at once. */
  async setup(name: string, password: string): Promise<Unlocked> {
    return unlocked(await this.#request('POST', '/api/setup', undefined, { name, password }));
  }

  /** `GET /api/users`: the people of this instance, for the picker. */
  async people(signal?: AbortSignal): Promise<Person[]> {
    return list(await this.#request('GET', '/api/users', signal), 'people') as Person[];
  }

  /** `POST /api/login` */
  async login(name: string, password: string): Promise<Unlocked> {
    return unlocked(await this.#request('POST', '/api/login', undefined, { name, password }));
  }

  /** `POST /api/enrol`: the person spends their enrolment code and chooses a password. */
  async enrol(name: string, enrolmentCode: string, password: string): Promise<Unlocked> {
    const body = { name, enrolment_code: enrolmentCode, password };
    return unlocked(await this.#request('POST', '/api/enrol', undefined, body));
  }

  /**
   * `POST /api/enrol/check`: before a password is chosen, who will be able to open the
   * space (by name). Counted by the server like an enrolment attempt, so asked once per
   * name and code.
   */
  async enrolmentCheck(name: string, enrolmentCode: string, signal?: AbortSignal): Promise<EnrolmentCheck> {
    const body = record(await this.#request('POST', '/api/enrol/check', signal, { name, enrolment_code: enrolmentCode }), 'enrolment check');
    const supervisors = Array.isArray(body['supervisors']) ? body['supervisors'].filter((name): name is string => typeof name === 'string') : [];
    return { supervisors };
  }

  /** `POST /api/recover`: a forgotten password, reset with the recovery code. */
  async recover(name: string, recoveryCode: string, newPassword: string): Promise<Unlocked> {
    const body = { name, recovery_code: recoveryCode, new_password: newPassword };
    return unlocked(await this.#request('POST', '/api/recover', undefined, body));
  }

  // ---- session routes ------------------------------------------------------

  /** `GET /api/me`: who I am and what my role allows. */
  async me(signal?: AbortSignal): Promise<Me> {
    const body = await this.#request('GET', '/api/me', signal);
    if (!isRecord(body) || !isRecord(body['user']) || !isRecord(body['role'])) throw unexpected('me');
    return body as unknown as Me;
  }

  /** `GET /api/me/settings`: the person's own settings, from their private file. */
  async settings(signal?: AbortSignal): Promise<Readonly<Record<string, string>>> {
    const body = record(await this.#request('GET', '/api/me/settings', signal), 'settings');
    return Object.fromEntries(Object.entries(body).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
  }

  /** `PUT /api/me/settings/{key}` */
  async putSetting(key: string, value: string): Promise<void> {
    await this.#request('PUT', `/api/me/settings/${encodeURIComponent(key)}`, undefined, { value });
  }

  /** `GET /api/me/rules`: my own "always allow" rules. */
  async myRules(signal?: AbortSignal): Promise<PersonalRule[]> {
    return list(await this.#request('GET', '/api/me/rules', signal), 'rules') as PersonalRule[];
  }

  /** `DELETE /api/me/rules/{id}`: takes one of my "always allow" rules back. */
  async deleteMyRule(id: number): Promise<void> {
    await this.#request('DELETE', `/api/me/rules/${id}`);
  }

  /**
   * `POST /api/lock`: locks every window of mine. Every other request of this client
   * ends first (as cancelled), so a page still reading cannot race the lock into a 401.
   */
  async lock(): Promise<void> {
    this.#ending.abort();
    await this.#request('POST', '/api/lock', undefined, undefined, { last: true });
  }

  /** `GET /api/models`: the models my role allows. */
  async models(signal?: AbortSignal): Promise<Model[]> {
    return list(await this.#request('GET', '/api/models', signal), 'models') as Model[];
  }

  /** `GET /api/sessions`: my conversations, most recent first. */
  async sessions(signal?: AbortSignal): Promise<Conversation[]> {
    return list(await this.#request('GET', '/api/sessions', signal), 'sessions') as Conversation[];
  }

  /** `GET /api/sessions/search?q=`: rows of my conversations holding every word, best first. */
  async searchSessions(query: string, signal?: AbortSignal): Promise<MessageHit[]> {
    const body = await this.#request('GET', `/api/sessions/search?q=${encodeURIComponent(query)}`, signal);
    if (!isRecord(body)) throw unexpected('search');
    return list(body['hits'], 'search') as MessageHit[];
  }

  /**
   * `POST /api/sessions`, pinned to `model` when given. A `temporary` one reads and writes
   * no memories, is left out of the list, and is the page's to delete when the person leaves it.
   */
  async createSession(model?: string, options: { readonly temporary?: boolean } = {}): Promise<Conversation> {
    const json = { ...(model === undefined ? {} : { model }), ...(options.temporary ? { temporary: true } : {}) };
    const body = await this.#request('POST', '/api/sessions', undefined, json);
    if (!isRecord(body) || typeof body['id'] !== 'string') throw unexpected('session');
    return { temporary: false, ...body } as unknown as Conversation;
  }

  /** `GET /api/sessions/{id}`, with the model its next turn would use. */
  async session(id: string, signal?: AbortSignal): Promise<SessionDetail> {
    const body = await this.#request('GET', `/api/sessions/${encodeURIComponent(id)}`, signal);
    if (!isRecord(body) || typeof body['id'] !== 'string') throw unexpected('session');
    return { next_model: null, versions: [], ...body } as unknown as SessionDetail;
  }

  /** `PATCH /api/sessions/{id}` `{"model"}`: pins the conversation to a model, or unpins it (`null`). */
  async pinModel(id: string, model: string | null): Promise<void> {
    await this.#request('PATCH', `/api/sessions/${encodeURIComponent(id)}`, undefined, { model });
  }

  /** `POST /api/sessions/{id}/retry`: the failed last turn again, without a second copy of the message. */
  async retry(id: string): Promise<{ readonly turn: string; readonly message: number }> {
    const body = await this.#request('POST', `/api/sessions/${encodeURIComponent(id)}/retry`, undefined, {});
    return started(body, 'retry');
  }

  /** `PATCH /api/sessions/{id}` */
  async renameSession(id: string, title: string): Promise<void> {
    await this.#request('PATCH', `/api/sessions/${encodeURIComponent(id)}`, undefined, { title });
  }

  /** `PATCH /api/sessions/{id}` `{"pinned"?, "archived"?}`: pins or archives a conversation, or undoes it. */
  async setSessionFlags(id: string, flags: { readonly pinned?: boolean; readonly archived?: boolean }): Promise<void> {
    await this.#request('PATCH', `/api/sessions/${encodeURIComponent(id)}`, undefined, flags);
  }

  /** `DELETE /api/sessions/{id}`; refused (409 `busy`) while a turn runs in it. */
  async deleteSession(id: string): Promise<void> {
    await this.#request('DELETE', `/api/sessions/${encodeURIComponent(id)}`);
  }

  /**
   * `DELETE /api/sessions/{id}` as the page goes away (`pagehide`): sent with `keepalive`,
   * so it outlives the page, and never waited for. Whatever the answer, nothing reads it.
   */
  deleteSessionAsPageLeaves(id: string): void {
    void this.#fetch(new URL(`/api/sessions/${encodeURIComponent(id)}`, this.#baseUrl), {
      method: 'DELETE',
      headers: { Accept: 'application/json', Authorization: `Bearer ${this.#token}` },
      credentials: 'omit',
      cache: 'no-store',
      keepalive: true,
    }).catch(() => undefined);
  }

  /**
   * `GET /api/sessions/{id}/messages`: the history, oldest first; with `page`, only the
   * latest `turns` whole turns, or those before the turn `before`.
   */
  async history(id: string, signal?: AbortSignal, page?: { readonly turns: number; readonly before?: string }): Promise<HistoryRow[]> {
    const query = page ? `?${new URLSearchParams({ turns: String(page.turns), ...(page.before ? { before: page.before } : {}) }).toString()}` : '';
    const body = await this.#request('GET', `/api/sessions/${encodeURIComponent(id)}/messages${query}`, signal);
    return list(body, 'history') as HistoryRow[];
  }

  /**
   * `POST /api/sessions/{id}/messages`: sends a message; the reply streams over the socket.
   * `documents` (ids, at most four, each read) follow the words as outside content.
   */
  async send(
    id: string,
    text: string,
    resources: readonly AttachedResource[] = [],
    documents: readonly string[] = [],
  ): Promise<{ readonly turn: string; readonly message: number }> {
    const payload = {
      text,
      ...(resources.length > 0 ? { resources } : {}),
      ...(documents.length > 0 ? { documents } : {}),
    };
    const body = await this.#request('POST', `/api/sessions/${encodeURIComponent(id)}/messages`, undefined, payload);
    return started(body, 'send');
  }

  /** `GET /api/me/tool-resources`: the tool servers' resources I may attach to a message. */
  async toolResources(signal?: AbortSignal): Promise<ToolResource[]> {
    return list(await this.#request('GET', '/api/me/tool-resources', signal), 'tool resources') as ToolResource[];
  }

  /**
   * `POST /api/sessions/{id}/messages` `{"text", "replaces", "documents"?}`: the message of
   * turn `turn`, edited and sent again as another version of it, with the documents it had
   * attached (read again by the server, never sent back as text); the old one stays readable.
   */
  async resend(id: string, turn: string, text: string, documents: readonly string[] = []): Promise<{ readonly turn: string; readonly message: number }> {
    const payload = documents.length > 0 ? { text, replaces: turn, documents } : { text, replaces: turn };
    const body = await this.#request('POST', `/api/sessions/${encodeURIComponent(id)}/messages`, undefined, payload);
    return started(body, 'resend');
  }

  /** `POST /api/sessions/{id}/regenerate` `{"turn"}`: another reply to the same message, as a new version. */
  async regenerate(id: string, turn: string): Promise<{ readonly turn: string; readonly message: number }> {
    const body = await this.#request('POST', `/api/sessions/${encodeURIComponent(id)}/regenerate`, undefined, { turn });
    return started(body, 'regenerate');
  }

  /** `PUT /api/sessions/{id}/active` `{"turn"}`: shows the version through `turn`. */
  async chooseVersion(id: string, turn: string): Promise<void> {
    await this.#request('PUT', `/api/sessions/${encodeURIComponent(id)}/active`, undefined, { turn });
  }

  /** `POST /api/sessions/{id}/stop`: returns once the turn has stopped. */
  async stop(id: string): Promise<void> {
    await this.#request('POST', `/api/sessions/${encodeURIComponent(id)}/stop`, undefined, {});
  }

  /** `GET /api/inbox`: what waits on me, oldest first. */
  async inbox(signal?: AbortSignal): Promise<Card[]> {
    return list(await this.#request('GET', '/api/inbox', signal), 'inbox').filter(isCard);
  }

  /**
   * `POST /api/inbox/{id}` with a decision, bound to the arguments that were shown.
   * `replace`, with allow on a `remember` card, names the similar memory the new one replaces.
   */
  async decide(id: string, decision: 'allow' | 'deny', argumentsHash: string, always = false, replace?: string): Promise<void> {
    const body = {
      decision,
      arguments_hash: argumentsHash,
      ...(always ? { always: true } : {}),
      ...(replace === undefined ? {} : { replace }),
    };
    await this.#request('POST', `/api/inbox/${encodeURIComponent(id)}`, undefined, body);
  }

  /** `POST /api/inbox/{id}` with the answer to a question. */
  async answer(id: string, answer: string): Promise<void> {
    await this.#request('POST', `/api/inbox/${encodeURIComponent(id)}`, undefined, { answer });
  }

  /**
   * `POST /api/inbox/{id}` with the reply to a tool server's form: accept with the filled
   * form, decline or cancel. What is typed goes to the server and is kept nowhere.
   */
  async replyToForm(id: string, decision: 'accept' | 'decline' | 'cancel', content?: Record<string, unknown>): Promise<void> {
    const body = decision === 'accept' ? { decision, content: content ?? {} } : { decision };
    await this.#request('POST', `/api/inbox/${encodeURIComponent(id)}`, undefined, body);
  }

  /** `POST /api/inbox/{id}` on a tool server's request for a model's answer: allow or deny. */
  async decideSample(id: string, decision: 'allow' | 'deny'): Promise<void> {
    await this.#request('POST', `/api/inbox/${encodeURIComponent(id)}`, undefined, { decision });
  }

  /** `GET /api/providers/detect` (administrators): model servers running here. */
  async detectProviders(signal?: AbortSignal): Promise<DetectedServer[]> {
    return list(await this.#request('GET', '/api/providers/detect', signal), 'detect') as DetectedServer[];
  }

  /** `POST /api/providers` (administrators): connects and lists the models, live. */
  async addProvider(provider: NewProvider): Promise<{ readonly id: string; readonly models: readonly { readonly model_id: string }[] }> {
    const body = await this.#request('POST', '/api/providers', undefined, provider);
    if (!isRecord(body) || typeof body['id'] !== 'string') throw unexpected('provider');
    const models = Array.isArray(body['models']) ? (body['models'] as { model_id: string }[]) : [];
    return { id: body['id'], models };
  }

  // ---- the built-in model (administrators) -----------------------------------

  /** `GET /api/local-models/catalogue`: the recommended models, each marked when already here. */
  async localCatalogue(signal?: AbortSignal): Promise<Catalogue> {
    const body = await this.#request('GET', '/api/local-models/catalogue', signal);
    if (!isRecord(body) || typeof body['available'] !== 'boolean' || !Array.isArray(body['models'])) throw unexpected('catalogue');
    return body as unknown as Catalogue;
  }

  /** `POST /api/local-models/downloads` `{"catalogue"}`: starts (or resumes) a download; its id. */
  async startDownload(catalogueId: string): Promise<string> {
    const body = await this.#request('POST', '/api/local-models/downloads', undefined, { catalogue: catalogueId });
    if (!isRecord(body) || typeof body['id'] !== 'string') throw unexpected('download');
    return body['id'];
  }

  /** `GET /api/local-models/downloads`: the downloads since Skald started. */
  async downloads(signal?: AbortSignal): Promise<DownloadStatus[]> {
    return list(await this.#request('GET', '/api/local-models/downloads', signal), 'downloads').filter(isDownloadStatus);
  }

  /** `GET /api/local-models`: the built-in provider's models, the disk they take, the engine. */
  async localModels(signal?: AbortSignal): Promise<LocalModelsReport> {
    const body = await this.#request('GET', '/api/local-models', signal);
    if (!isRecord(body) || !Array.isArray(body['models']) || !isRecord(body['engine'])) throw unexpected('local models');
    return body as unknown as LocalModelsReport;
  }

  /** `POST /api/local-models/{id}/retry`: lets a model that kept crashing the engine start again. */
  async retryLocalModel(id: string): Promise<void> {
    await this.#request('POST', `/api/local-models/${encodeURIComponent(id)}/retry`, undefined, {});
  }

  /** `DELETE /api/local-models/{id}`: unloads the model and deletes its file. */
  async deleteLocalModel(id: string): Promise<void> {
    await this.#request('DELETE', `/api/local-models/${encodeURIComponent(id)}`);
  }

  /**
   * `POST /api/local-models/upload?name=`: sends a GGUF file as the body, reporting
   * `progress(sent, total)` as the bytes leave. Aborting `signal` stops the transfer
   * (the server keeps nothing of it).
   */
  async uploadLocalModel(
    file: Blob,
    name: string,
    progress: (sent: number, total: number) => void,
    signal?: AbortSignal,
  ): Promise<InstalledModel> {
    const body = await this.#upload(`/api/local-models/upload?name=${encodeURIComponent(name)}`, file, progress, signal);
    if (!isRecord(body) || typeof body['model'] !== 'string') throw unexpected('upload');
    return body as unknown as InstalledModel;
  }

  // ---- notices, privacy, my account -----------------------------------------

  /** `GET /api/notices`: changes someone else made that I have not seen, oldest first. */
  async notices(signal?: AbortSignal): Promise<Notice[]> {
    return list(await this.#request('GET', '/api/notices', signal), 'notices') as Notice[];
  }

  /** `POST /api/notices/seen`: marks my notices up to `upto` as seen. */
  async markNoticesSeen(upto: number): Promise<void> {
    await this.#request('POST', '/api/notices/seen', undefined, { upto });
  }

  /**
   * `POST /api/notices/{id}/accept`: my decision on a change that holds my
   * turns. Declined, it stays out of force for me.
   */
  async decideNotice(id: number, decision: 'accept' | 'decline'): Promise<void> {
    await this.#request('POST', `/api/notices/${id}/accept`, undefined, { decision });
  }

  /** `GET /api/me/privacy`: who can see my words. */
  async privacy(signal?: AbortSignal): Promise<PrivacyReport> {
    const body = await this.#request('GET', '/api/me/privacy', signal);
    if (!isRecord(body) || !Array.isArray(body['providers']) || !isRecord(body['administrators_see'])) throw unexpected('privacy');
    return body as unknown as PrivacyReport;
  }

  /** `GET /api/me/supervision`: whose space I may open, and who may open mine. */
  async mySupervision(signal?: AbortSignal): Promise<MySupervision> {
    const body = record(await this.#request('GET', '/api/me/supervision', signal), 'supervision');
    if (!Array.isArray(body['supervising']) || !Array.isArray(body['supervised_by'])) throw unexpected('supervision');
    return body as unknown as MySupervision;
  }

  /** `POST /api/supervision/{id}/accept`: I let the supervisor open my space. */
  async acceptSupervision(id: string): Promise<SupervisionEdge> {
    return edge(await this.#request('POST', `/api/supervision/${encodeURIComponent(id)}/accept`, undefined, {}));
  }

  /**
   * `DELETE /api/supervision/{id}`: declines a request, or ends an edge (an administrator,
   * the supervisor, or the supervised person where their role allows it).
   */
  async endSupervision(id: string): Promise<SupervisionEdge> {
    return edge(await this.#request('DELETE', `/api/supervision/${encodeURIComponent(id)}`));
  }

  /** `GET /api/me/access-log`: every time a supervisor opened my space and what they read, newest first. */
  async accessLog(signal?: AbortSignal): Promise<AccessEntry[]> {
    return list(await this.#request('GET', '/api/me/access-log', signal), 'access log') as AccessEntry[];
  }

  /**
   * `POST /api/me/rotate-key`: a new key for my space. Every session of mine ends, this
   * one's too; the answer is a new session and a new recovery code, to show once.
   */
  async rotateKey(password: string): Promise<Unlocked> {
    return unlocked(await this.#request('POST', '/api/me/rotate-key', undefined, { password }));
  }

  // ---- a supervised person's space, read-only (each read is shown to them) ----

  /** `GET /api/supervised/{user}/sessions`: their conversations. */
  async supervisedSessions(user: string, signal?: AbortSignal): Promise<Conversation[]> {
    return list(await this.#request('GET', `/api/supervised/${encodeURIComponent(user)}/sessions`, signal), 'conversations') as Conversation[];
  }

  /** `GET /api/supervised/{user}/sessions/{id}/messages`: one conversation's history. */
  async supervisedHistory(user: string, id: string, signal?: AbortSignal): Promise<HistoryRow[]> {
    const path = `/api/supervised/${encodeURIComponent(user)}/sessions/${encodeURIComponent(id)}/messages`;
    return list(await this.#request('GET', path, signal), 'history') as HistoryRow[];
  }

  /** `GET /api/supervised/{user}/notes`: their notes' titles. */
  async supervisedNotes(user: string, signal?: AbortSignal): Promise<NoteSummary[]> {
    return list(await this.#request('GET', `/api/supervised/${encodeURIComponent(user)}/notes`, signal), 'notes') as NoteSummary[];
  }

  /** `GET /api/supervised/{user}/notes/{id}`: one note. */
  async supervisedNote(user: string, id: number, signal?: AbortSignal): Promise<Note> {
    return record(await this.#request('GET', `/api/supervised/${encodeURIComponent(user)}/notes/${id}`, signal), 'note') as unknown as Note;
  }

  /** `GET /api/supervised/{user}/memories`: what Skald remembers for them. */
  async supervisedMemories(user: string, signal?: AbortSignal): Promise<Memory[]> {
    return list(await this.#request('GET', `/api/supervised/${encodeURIComponent(user)}/memories`, signal), 'memories') as Memory[];
  }

  /**
   * `GET /api/supervised/{user}/cards`: the approval cards waiting for me as their
   * supervisor, pending, as their inbox shows them.
   */
  async supervisedCards(user: string, signal?: AbortSignal): Promise<ApprovalCard[]> {
    const cards = list(await this.#request('GET', `/api/supervised/${encodeURIComponent(user)}/cards`, signal), 'cards');
    return cards.filter(isCard).filter((card): card is ApprovalCard => card.kind === 'approval');
  }

  /**
   * `POST /api/supervised/{user}/cards/{id}`: allow (once, never always) or deny one of
   * their cards, bound to the arguments that were shown (409 `card_changed` otherwise);
   * the answer is the card as decided, with `decided_by`.
   */
  async decideSupervisedCard(user: string, id: string, allow: boolean, argumentsHash: string): Promise<ApprovalCard> {
    const path = `/api/supervised/${encodeURIComponent(user)}/cards/${encodeURIComponent(id)}`;
    const body = await this.#request('POST', path, undefined, { allow, arguments_hash: argumentsHash });
    if (!isCard(body) || body.kind !== 'approval') throw unexpected('card');
    return body;
  }

  /** `POST /api/me/password`: re-wraps my key under a new password. */
  async changePassword(currentPassword: string, newPassword: string): Promise<void> {
    await this.#request('POST', '/api/me/password', undefined, { current_password: currentPassword, new_password: newPassword });
  }

  /**
   * `GET /api/me/export`: everything in my space as a zip, in memory. The
   * bearer must ride in a header, so this is a fetch, not a link.
   */
  async exportArchive(signal?: AbortSignal): Promise<{ readonly blob: Blob; readonly filename: string }> {
    const response = await this.#send('GET', '/api/me/export', signal, undefined, 'application/zip');
    if (!response.ok) await this.#fail(response);
    const disposition = response.headers.get('Content-Disposition') ?? '';
    const filename = /filename="([^"]+)"/.exec(disposition)?.[1] ?? 'skald-export.zip';
    return { blob: await response.blob(), filename };
  }

  /** `DELETE /api/me`: deletes my account and destroys my file; `confirm` is my exact name. */
  async deleteAccount(password: string, confirm: string): Promise<void> {
    await this.#request('DELETE', '/api/me', undefined, { password, confirm });
  }

  // ---- notes ---------------------------------------------------------------

  /** `GET /api/notes`: my notes, newest first. */
  async notes(signal?: AbortSignal): Promise<NoteSummary[]> {
    return list(await this.#request('GET', '/api/notes', signal), 'notes') as NoteSummary[];
  }

  /** `GET /api/notes?q=`: full-text matches, each with a snippet. */
  async searchNotes(query: string, signal?: AbortSignal): Promise<NoteHit[]> {
    return list(await this.#request('GET', `/api/notes?q=${encodeURIComponent(query)}`, signal), 'notes') as NoteHit[];
  }

  /** `GET /api/notes/{id}` */
  async note(id: number, signal?: AbortSignal): Promise<Note> {
    return record(await this.#request('GET', `/api/notes/${id}`, signal), 'note') as unknown as Note;
  }

  /** `POST /api/notes`: a note I write myself. */
  async createNote(title: string, body: string): Promise<Note> {
    return record(await this.#request('POST', '/api/notes', undefined, { title, body }), 'note') as unknown as Note;
  }

  /** `PUT /api/notes/{id}` */
  async updateNote(id: number, change: { readonly title?: string; readonly body?: string }): Promise<Note> {
    return record(await this.#request('PUT', `/api/notes/${id}`, undefined, change), 'note') as unknown as Note;
  }

  /** `DELETE /api/notes/{id}` */
  async deleteNote(id: number): Promise<void> {
    await this.#request('DELETE', `/api/notes/${id}`);
  }

  // ---- documents -------------------------------------------------------------

  /** `GET /api/documents`: mine and the shared pool's, newest first. */
  async documents(signal?: AbortSignal): Promise<Document[]> {
    return list(await this.#request('GET', '/api/documents', signal), 'documents') as Document[];
  }

  /** `GET /api/documents/{id}`: one document as it is now (its status while it is being read). */
  async document(id: string, signal?: AbortSignal): Promise<Document> {
    return documentOf(await this.#request('GET', `/api/documents/${encodeURIComponent(id)}`, signal));
  }

  /**
   * `POST /api/documents?name=&pool=`: the file's bytes as the body; the server tells its
   * type from the bytes, so none is claimed here. The answer is the document, usually
   * still `reading`: its text is extracted in the background. Refused in words (413
   * `too_large`, 415 `unsupported_type`, 400 `empty_file`, 409 `duplicate_document`).
   * With `useExisting`, the same bytes kept already in that pool are no refusal: the
   * answer is the document kept (`existing=use`), as attaching a file picked again wants.
   */
  async uploadDocument(
    file: Blob,
    name: string,
    pool: DocumentPool,
    progress?: (sent: number, total: number) => void,
    signal?: AbortSignal,
    options: UploadOptions = {},
  ): Promise<Document> {
    const query = new URLSearchParams({ name, pool, ...(options.useExisting === true ? { existing: 'use' } : {}) });
    return documentOf(await this.#upload(`/api/documents?${query.toString()}`, file, progress, signal));
  }

  /**
   * `GET /api/documents/{id}/content`: the original bytes, in memory. A fetch with the
   * bearer, not a link: the token never goes into an address.
   */
  async documentContent(id: string, signal?: AbortSignal): Promise<Blob> {
    if (this.#ending.signal.aborted) throw new ApiError('aborted', 'The request was cancelled.', 0);
    const guarded = this.#unlessEnding(signal);
    try {
      const response = await this.#send('GET', `/api/documents/${encodeURIComponent(id)}/content`, guarded.signal, undefined, '*/*');
      if (!response.ok) await this.#fail(response);
      return await response.blob();
    } catch (cause) {
      if (cause instanceof DOMException && cause.name === 'AbortError') throw new ApiError('aborted', 'The request was cancelled.', 0);
      throw cause;
    } finally {
      guarded.done();
    }
  }

  /** `GET /api/documents/{id}/text?page=`: the text extracted from one page (counted from 1). */
  async documentText(id: string, page: number, signal?: AbortSignal): Promise<DocumentText> {
    const body = record(await this.#request('GET', `/api/documents/${encodeURIComponent(id)}/text?page=${page}`, signal), 'document text');
    if (typeof body['text'] !== 'string' || typeof body['pages'] !== 'number') throw unexpected('document text');
    return body as unknown as DocumentText;
  }

  /** `DELETE /api/documents/{id}` */
  async deleteDocument(id: string): Promise<void> {
    await this.#request('DELETE', `/api/documents/${encodeURIComponent(id)}`);
  }

  /** `GET /api/documents/search?q=`: pages holding the words, best first, each with a snippet. */
  async searchDocuments(query: string, signal?: AbortSignal): Promise<DocumentHit[]> {
    return list(await this.#request('GET', `/api/documents/search?q=${encodeURIComponent(query)}`, signal), 'search') as DocumentHit[];
  }

  // ---- voice -------------------------------------------------------------------

  /** `GET /api/voice`: what voice input can do here, and why not when it cannot. */
  async voice(signal?: AbortSignal): Promise<VoiceOverview> {
    const body = record(await this.#request('GET', '/api/voice', signal), 'voice');
    if (!isRecord(body['transcription'])) throw unexpected('voice');
    return body as unknown as VoiceOverview;
  }

  /**
   * `POST /api/voice/transcriptions`: a recording (a WAV file) written down by the speech
   * engine on the computer Skald runs on. Silence gives empty text.
   */
  async transcribe(recording: Blob, signal?: AbortSignal): Promise<Transcript> {
    const body = record(await this.#upload('/api/voice/transcriptions', recording, undefined, signal), 'transcript');
    if (typeof body['text'] !== 'string') throw unexpected('transcript');
    return body as unknown as Transcript;
  }

  /**
   * `POST /api/voice/speech`: `text` (plain words) read aloud on the computer Skald runs
   * on, as a WAV file, with the engine that read it (`piper`, `espeak-ng`).
   */
  async speak(text: string, options: { readonly voice?: string; readonly speed?: number } = {}, signal?: AbortSignal): Promise<{ readonly audio: ArrayBuffer; readonly engine: string }> {
    if (this.#ending.signal.aborted) throw new ApiError('aborted', 'The request was cancelled.', 0);
    const guarded = this.#unlessEnding(signal);
    try {
      const body = { text, ...(options.voice ? { voice: options.voice } : {}), ...(options.speed !== undefined ? { speed: options.speed } : {}) };
      const response = await this.#send('POST', '/api/voice/speech', guarded.signal, body, 'audio/wav');
      if (!response.ok) await this.#fail(response);
      return { audio: await response.arrayBuffer(), engine: response.headers.get('x-skald-speech-engine') ?? '' };
    } catch (cause) {
      if (cause instanceof DOMException && cause.name === 'AbortError') throw new ApiError('aborted', 'The request was cancelled.', 0);
      throw cause;
    } finally {
      guarded.done();
    }
  }

  /**
   * `POST /api/voice/models` `{"path"}` (administrators): a speech model from a file on this
   * computer, in a folder models may be imported from; the model, once converted and kept.
   */
  async addSpeechModel(path: string): Promise<SpeechModel> {
    const body = record(await this.#request('POST', '/api/voice/models', undefined, { path }), 'speech model');
    if (typeof body['id'] !== 'string') throw unexpected('speech model');
    return body as unknown as SpeechModel;
  }

  /** `POST /api/voice/voices` `{"path"}` (administrators): a Piper voice from a file on this computer. */
  async addSpeechVoice(path: string): Promise<SpeechVoice> {
    const body = record(await this.#request('POST', '/api/voice/voices', undefined, { path }), 'voice');
    if (typeof body['id'] !== 'string') throw unexpected('voice');
    return body as unknown as SpeechVoice;
  }

  /** `GET /api/voice/catalogue` (administrators): the speech models and voices to download, each marked when here. */
  async voiceCatalogue(signal?: AbortSignal): Promise<VoiceCatalogue> {
    const body = record(await this.#request('GET', '/api/voice/catalogue', signal), 'voice catalogue');
    if (!Array.isArray(body['entries'])) throw unexpected('voice catalogue');
    return body as unknown as VoiceCatalogue;
  }

  /** `POST /api/voice/downloads` `{"catalogue"}` (administrators): starts a download; its id. */
  async startVoiceDownload(catalogueId: string): Promise<string> {
    const body = record(await this.#request('POST', '/api/voice/downloads', undefined, { catalogue: catalogueId }), 'download');
    if (typeof body['id'] !== 'string') throw unexpected('download');
    return body['id'];
  }

  /** `GET /api/voice/downloads` (administrators): the speech model and voice downloads since Skald started. */
  async voiceDownloads(signal?: AbortSignal): Promise<DownloadStatus[]> {
    return list(await this.#request('GET', '/api/voice/downloads', signal), 'downloads').filter(isDownloadStatus);
  }

  // ---- scheduled jobs --------------------------------------------------------

  /** `GET /api/jobs`: my reminders, the next due first. */
  async jobs(signal?: AbortSignal): Promise<Job[]> {
    return list(await this.#request('GET', '/api/jobs', signal), 'jobs') as Job[];
  }

  /** `POST /api/jobs` */
  async createJob(job: NewJob): Promise<Job> {
    return record(await this.#request('POST', '/api/jobs', undefined, job), 'job') as unknown as Job;
  }

  /** `PATCH /api/jobs/{id}` */
  async updateJob(id: string, change: JobChange): Promise<Job> {
    return record(await this.#request('PATCH', `/api/jobs/${encodeURIComponent(id)}`, undefined, change), 'job') as unknown as Job;
  }

  /** `DELETE /api/jobs/{id}` */
  async deleteJob(id: string): Promise<void> {
    await this.#request('DELETE', `/api/jobs/${encodeURIComponent(id)}`);
  }

  /** `POST /api/jobs/{id}/snooze`: puts a job off; it comes again after `length`. */
  async snoozeJob(id: string, length: Snooze): Promise<Job> {
    const body: SnoozeRequest = { for: length };
    return record(await this.#request('POST', `/api/jobs/${encodeURIComponent(id)}/snooze`, undefined, body), 'job') as unknown as Job;
  }

  /** `GET /api/jobs/{id}/runs`: how each occurrence went, the latest first. */
  async jobRuns(id: string, signal?: AbortSignal): Promise<JobRun[]> {
    return list(await this.#request('GET', `/api/jobs/${encodeURIComponent(id)}/runs`, signal), 'runs') as JobRun[];
  }

  /** `POST /api/jobs/preview`: the next occurrences of a schedule, or why it cannot be. */
  async previewJob(schedule: { readonly at?: string; readonly cron?: string; readonly zone?: string }, signal?: AbortSignal): Promise<Preview> {
    return record(await this.#request('POST', '/api/jobs/preview', signal, schedule), 'preview') as unknown as Preview;
  }

  // ---- agents ----------------------------------------------------------------

  /** `GET /api/agents`: every agent, and the folders that hold no usable one. */
  async agents(signal?: AbortSignal): Promise<AgentList> {
    const body = await this.#request('GET', '/api/agents', signal);
    if (!isRecord(body) || !Array.isArray(body['agents'])) throw unexpected('agents');
    return { agents: body['agents'] as AgentList['agents'], problems: Array.isArray(body['problems']) ? (body['problems'] as AgentList['problems']) : [] };
  }

  /** `GET /api/agents/{id}`: one agent with its prompt as written. */
  async agent(id: string, signal?: AbortSignal): Promise<AgentDetail> {
    return record(await this.#request('GET', `/api/agents/${encodeURIComponent(id)}`, signal), 'agent') as unknown as AgentDetail;
  }

  /** `PUT /api/agents/{id}` (administrators): writes `meta.json` and `AGENT.md`. */
  async saveAgent(id: string, meta: Record<string, unknown>, prompt: string): Promise<void> {
    await this.#request('PUT', `/api/agents/${encodeURIComponent(id)}`, undefined, { meta, prompt });
  }

  /** `PUT /api/me/tool-servers/{id}/token`: my own token for an HTTP tool server, kept in my file. */
  async putOwnToken(id: string, token: string): Promise<void> {
    await this.#request('PUT', `/api/me/tool-servers/${encodeURIComponent(id)}/token`, undefined, { token });
  }

  /** `DELETE /api/me/tool-servers/{id}/token`: my calls use the shared token again. */
  async deleteOwnToken(id: string): Promise<void> {
    await this.#request('DELETE', `/api/me/tool-servers/${encodeURIComponent(id)}/token`);
  }

  /** `GET /api/me/tool-prompts`: the tool servers' prompts I am offered, as templates. */
  async toolPrompts(signal?: AbortSignal): Promise<ToolPrompt[]> {
    return list(await this.#request('GET', '/api/me/tool-prompts', signal), 'tool prompts') as ToolPrompt[];
  }

  /** `POST /api/me/tool-prompts/{server}/{name}`: a prompt filled in, as text for my message. */
  async fillToolPrompt(server: string, name: string, args: Record<string, string>): Promise<string> {
    const path = `/api/me/tool-prompts/${encodeURIComponent(server)}/${encodeURIComponent(name)}`;
    const body = record(await this.#request('POST', path, undefined, { arguments: args }), 'tool prompt');
    if (typeof body['text'] !== 'string') throw unexpected('tool prompt');
    return body['text'];
  }

  // ---- tool servers (MCP, administrators) -----------------------------------

  /** `GET /api/mcp/servers`: every tool server with its state, approval and tools. */
  async mcpServers(signal?: AbortSignal): Promise<McpServer[]> {
    return list(await this.#request('GET', '/api/mcp/servers', signal), 'tool servers') as McpServer[];
  }

  /** `POST /api/mcp/servers`: adds a server, which lists its tools; none is offered before approval. */
  async addMcpServer(body: NewMcpServer): Promise<string> {
    const added = record(await this.#request('POST', '/api/mcp/servers', undefined, body), 'added server');
    return String(added['id']);
  }

  /** `POST /api/mcp/servers/{id}/approve`: the tools named, or all it lists now. */
  async approveMcp(id: string, tools: string[] | null): Promise<void> {
    await this.#request('POST', `/api/mcp/servers/${encodeURIComponent(id)}/approve`, undefined, tools === null ? {} : { tools });
  }

  /** `PATCH /api/mcp/servers/{id}`: a change to what runs or is reached withdraws the approval. */
  async patchMcp(id: string, patch: McpServerPatch): Promise<void> {
    await this.#request('PATCH', `/api/mcp/servers/${encodeURIComponent(id)}`, undefined, patch);
  }

  /** `POST /api/mcp/servers/{id}/restart`: stops its instances, forgets its crashes, lists it again. */
  async restartMcp(id: string): Promise<void> {
    await this.#request('POST', `/api/mcp/servers/${encodeURIComponent(id)}/restart`, undefined, {});
  }

  /** `DELETE /api/mcp/servers/{id}`: removes it with its instances' folders. */
  async removeMcp(id: string): Promise<void> {
    await this.#request('DELETE', `/api/mcp/servers/${encodeURIComponent(id)}`);
  }

  /** `POST /api/mcp/import`: each server of another client's `mcpServers`, added or refused. */
  async importMcp(servers: Record<string, unknown>): Promise<McpImported[]> {
    return list(await this.#request('POST', '/api/mcp/import', undefined, { mcpServers: servers }), 'imported servers') as McpImported[];
  }

  // ---- memories ------------------------------------------------------------

  /**
   * `GET /api/memories`: the memories I can read (my private pool and the shared one),
   * newest first, or best match first with `q`.
   */
  async memories(filter: MemoryFilter = {}, signal?: AbortSignal): Promise<Memory[]> {
    const query = new URLSearchParams();
    if (filter.pool) query.set('pool', filter.pool);
    if (filter.subject) query.set('subject', filter.subject);
    if (filter.q && filter.q.trim() !== '') query.set('q', filter.q.trim());
    if (filter.limit !== undefined) query.set('limit', String(filter.limit));
    const text = query.toString();
    return list(await this.#request('GET', `/api/memories${text === '' ? '' : `?${text}`}`, signal), 'memories') as Memory[];
  }

  /** `GET /api/memories/{id}`: one memory I can read; 404 `no_memory` once it is erased or expired. */
  async memory(id: string, signal?: AbortSignal): Promise<Memory> {
    const body = record(await this.#request('GET', `/api/memories/${encodeURIComponent(id)}`, signal), 'memory');
    if (typeof body['id'] !== 'string') throw unexpected('memory');
    return body as unknown as Memory;
  }

  /** `GET /api/memories/search`: whether search and recall go by meaning (and with which model) or by words. */
  async memorySearch(signal?: AbortSignal): Promise<MemorySearch> {
    const body = record(await this.#request('GET', '/api/memories/search', signal), 'memory search');
    if (body['by'] !== 'meaning' && body['by'] !== 'words') throw unexpected('memory search');
    return { by: body['by'], model: typeof body['model'] === 'string' ? body['model'] : null };
  }

  /** `POST /api/memories`: a memory I write myself (no card); its id. */
  async createMemory(body: NewMemoryBody): Promise<string> {
    const created = record(await this.#request('POST', '/api/memories', undefined, body), 'memory');
    if (typeof created['id'] !== 'string') throw unexpected('memory');
    return created['id'];
  }

  /** `PATCH /api/memories/{id}`: its text, or pinned (no expiry) or not. */
  async updateMemory(id: string, change: MemoryChange): Promise<Memory> {
    return record(await this.#request('PATCH', `/api/memories/${encodeURIComponent(id)}`, undefined, change), 'memory') as unknown as Memory;
  }

  /** `DELETE /api/memories/{id}`: erased for good. */
  async deleteMemory(id: string): Promise<void> {
    await this.#request('DELETE', `/api/memories/${encodeURIComponent(id)}`);
  }

  /** `POST /api/memories/erase`: everything about a subject I may erase, at once. */
  async eraseMemories(subject: MemorySubject): Promise<MemoryErased> {
    return record(await this.#request('POST', '/api/memories/erase', undefined, { subject }), 'erase') as unknown as MemoryErased;
  }

  // ---- administration --------------------------------------------------------

  /** `GET /api/people` (administrators): everyone, the pending and the deactivated included. */
  async everyone(signal?: AbortSignal): Promise<Person[]> {
    return list(await this.#request('GET', '/api/people', signal), 'people') as Person[];
  }

  /**
   * `POST /api/users` (administrators): the person and their one-time enrolment code. With
   * `supervisor` (a person's id), that person can open the new space once it is enrolled.
   */
  async addPerson(name: string, role: string, supervisor?: string): Promise<Enrolment> {
    const body = supervisor === undefined ? { name, role } : { name, role, supervisor };
    return enrolment(await this.#request('POST', '/api/users', undefined, body));
  }

  /** `PATCH /api/users/{id}` (administrators): rename, change role. */
  async updatePerson(id: string, change: { readonly name?: string; readonly role?: string }): Promise<Person> {
    return record(await this.#request('PATCH', `/api/users/${encodeURIComponent(id)}`, undefined, change), 'person') as unknown as Person;
  }

  /** `POST /api/users/{id}/deactivate` or `/reactivate` (administrators). */
  async setPersonActive(id: string, active: boolean): Promise<Person> {
    const path = `/api/users/${encodeURIComponent(id)}/${active ? 'reactivate' : 'deactivate'}`;
    return record(await this.#request('POST', path, undefined, {}), 'person') as unknown as Person;
  }

  /** `POST /api/users/{id}/enrolment-code` (administrators): a new code; the old one dies. */
  async reissueEnrolment(id: string): Promise<Enrolment> {
    return enrolment(await this.#request('POST', `/api/users/${encodeURIComponent(id)}/enrolment-code`, undefined, {}));
  }

  /** `DELETE /api/users/{id}` (administrators): `confirm` is their exact name. */
  async deletePerson(id: string, confirm: string): Promise<void> {
    await this.#request('DELETE', `/api/users/${encodeURIComponent(id)}`, undefined, { confirm });
  }

  /** `GET /api/roles` (administrators) */
  async roles(signal?: AbortSignal): Promise<RoleDetail[]> {
    return list(await this.#request('GET', '/api/roles', signal), 'roles') as RoleDetail[];
  }

  /** `POST /api/roles` (administrators) */
  async createRole(id: string, label: string, attributes: RolePatch = {}): Promise<RoleDetail> {
    return record(await this.#request('POST', '/api/roles', undefined, { ...attributes, id, label }), 'role') as unknown as RoleDetail;
  }

  /** `PATCH /api/roles/{id}` (administrators) */
  async updateRole(id: string, patch: RolePatch): Promise<RoleDetail> {
    return record(await this.#request('PATCH', `/api/roles/${encodeURIComponent(id)}`, undefined, patch), 'role') as unknown as RoleDetail;
  }

  /** `DELETE /api/roles/{id}` (administrators): only a role nobody has. */
  async deleteRole(id: string): Promise<void> {
    await this.#request('DELETE', `/api/roles/${encodeURIComponent(id)}`);
  }

  /** `GET /api/supervision` (administrators): every supervision edge, with its counts. */
  async supervision(signal?: AbortSignal): Promise<SupervisionEdge[]> {
    return list(await this.#request('GET', '/api/supervision', signal), 'supervision') as SupervisionEdge[];
  }

  /**
   * `POST /api/supervision` (administrators): asks for an edge, pending until the person
   * accepts (or enrols). Refused (403 `supervision_refused`) where the roles do not allow it.
   */
  async requestSupervision(supervisor: string, supervised: string): Promise<SupervisionEdge> {
    return edge(await this.#request('POST', '/api/supervision', undefined, { supervisor, supervised }));
  }

  /** `GET /api/providers` (administrators): never a key, only whether one is set. */
  async providers(signal?: AbortSignal): Promise<Provider[]> {
    return list(await this.#request('GET', '/api/providers', signal), 'providers') as Provider[];
  }

  /** `PATCH /api/providers/{id}` (administrators) */
  async updateProvider(id: string, patch: ProviderPatch): Promise<void> {
    await this.#request('PATCH', `/api/providers/${encodeURIComponent(id)}`, undefined, patch);
  }

  /** `POST /api/providers/{id}/refresh` (administrators): reads the model list again, live. */
  async refreshProvider(id: string): Promise<number> {
    const body = await this.#request('POST', `/api/providers/${encodeURIComponent(id)}/refresh`, undefined, {});
    return isRecord(body) && Array.isArray(body['models']) ? body['models'].length : 0;
  }

  /** `DELETE /api/providers/{id}` (administrators) */
  async deleteProvider(id: string): Promise<void> {
    await this.#request('DELETE', `/api/providers/${encodeURIComponent(id)}`);
  }

  /** `GET /api/approval-rules` (administrators), in the order the gate weighs them. */
  async rules(signal?: AbortSignal): Promise<ApprovalRule[]> {
    return list(await this.#request('GET', '/api/approval-rules', signal), 'rules') as ApprovalRule[];
  }

  /** `POST /api/approval-rules` (administrators) */
  async addRule(rule: RuleInput): Promise<void> {
    await this.#request('POST', '/api/approval-rules', undefined, ruleBody(rule));
  }

  /** `PUT /api/approval-rules/{id}` (administrators) */
  async replaceRule(id: number, rule: RuleInput): Promise<void> {
    await this.#request('PUT', `/api/approval-rules/${id}`, undefined, ruleBody(rule));
  }

  /** `DELETE /api/approval-rules/{id}` (administrators) */
  async deleteRule(id: number): Promise<void> {
    await this.#request('DELETE', `/api/approval-rules/${id}`);
  }

  /** `GET /api/usage` (administrators): model use per person, never content. */
  async usage(signal?: AbortSignal): Promise<PersonUsage[]> {
    return list(await this.#request('GET', '/api/usage', signal), 'usage') as PersonUsage[];
  }

  /** `GET /api/audit` (administrators): the whole trail, newest first. */
  async audit(signal?: AbortSignal): Promise<AuditEntry[]> {
    return list(await this.#request('GET', '/api/audit', signal), 'audit') as AuditEntry[];
  }

  /** `GET /api/backups` (administrators): the one running, the newest written, the schedule. */
  async backups(signal?: AbortSignal): Promise<BackupList> {
    const body = record(await this.#request('GET', '/api/backups', signal), 'backups');
    if (!Array.isArray(body['backups'])) throw unexpected('backups');
    const current = isRecord(body['current']) ? body['current'] : null;
    const schedule = isRecord(body['schedule']) ? body['schedule'] : null;
    return { current, backups: body['backups'], schedule } as unknown as BackupList;
  }

  /**
   * `POST /api/backups` (administrators): checked, then written in the background; its
   * progress comes as `backup` events. Refused (400 `backup_refused`, 409 `backup_running`)
   * in words the page shows as they are.
   */
  async startBackup(backup: NewBackup): Promise<BackupStarted> {
    const body = record(await this.#request('POST', '/api/backups', undefined, backup), 'backup');
    if (typeof body['id'] !== 'string' || typeof body['path'] !== 'string') throw unexpected('backup');
    return { id: body['id'], path: body['path'] };
  }

  /** `PUT /api/backups/schedule` (administrators): a backup every day; the passphrase is kept when left out. */
  async setBackupSchedule(schedule: BackupScheduleBody): Promise<BackupSchedule> {
    const body = record(await this.#request('PUT', '/api/backups/schedule', undefined, schedule), 'backup schedule');
    if (typeof body['next_run'] !== 'string') throw unexpected('backup schedule');
    return body as unknown as BackupSchedule;
  }

  /** `DELETE /api/backups/schedule` (administrators): no more scheduled backups; those written stay. */
  async clearBackupSchedule(): Promise<void> {
    await this.#request('DELETE', '/api/backups/schedule');
  }

  /**
   * `POST /api/backups/restore-person` (administrators): one person's space and keys as a
   * backup holds them. Their windows lock; the password they had then opens it again.
   * Refused as the server words it (400 `backup_archive`, `backup_refused`).
   */
  async restorePerson(restore: RestorePersonBody): Promise<PersonRestored> {
    const body = record(await this.#request('POST', '/api/backups/restore-person', undefined, restore), 'restore');
    if (typeof body['name'] !== 'string' || typeof body['supervision_reset'] !== 'number') throw unexpected('restore');
    return body as unknown as PersonRestored;
  }

  /** `GET /api/health`: whether the server answers, and its version. */
  async health(signal?: AbortSignal): Promise<Health> {
    const body = await this.#request('GET', '/api/health', signal);
    if (!isHealth(body)) {
      throw new ApiError('bad_response', 'The server sent an unexpected health answer.', 200);
    }
    return body;
  }

  /**
   * `POST /api/client/events`: tells the server's log that the page reached a
   * milestone. Only fixed event names; never anything a person typed.
   */
  async report(event: ClientEvent): Promise<void> {
    await this.#request('POST', '/api/client/events', undefined, { event });
  }

  async #request(
    method: string,
    path: string,
    signal?: AbortSignal,
    json?: unknown,
    { last = false }: { readonly last?: boolean } = {},
  ): Promise<unknown> {
    if (!last && this.#ending.signal.aborted) throw new ApiError('aborted', 'The request was cancelled.', 0);
    const guarded = last ? { signal, done: () => undefined } : this.#unlessEnding(signal);
    let response: Response;
    let body: unknown;
    try {
      response = await this.#send(method, path, guarded.signal, json);
      if (!response.ok) await this.#fail(response);
      body = await readJson(response);
    } finally {
      guarded.done();
    }
    if (response.status === 204) return undefined;
    if (body === undefined) {
      throw new ApiError('bad_response', 'The server sent an answer that is not JSON.', response.status);
    }
    return body;
  }

  /**
   * `signal`, also aborted once this client is being locked; `done` lets go of the
   * listeners when the request is over, so a long session does not gather them.
   */
  #unlessEnding(signal?: AbortSignal): { readonly signal: AbortSignal; readonly done: () => void } {
    const ending = this.#ending.signal;
    if (signal === undefined) return { signal: ending, done: () => undefined };
    const both = new AbortController();
    const abort = (): void => both.abort();
    const listening = new AbortController();
    ending.addEventListener('abort', abort, { once: true, signal: listening.signal });
    signal.addEventListener('abort', abort, { once: true, signal: listening.signal });
    if (signal.aborted) both.abort();
    return { signal: both.signal, done: () => listening.abort() };
  }

  async #send(method: string, path: string, signal?: AbortSignal, json?: unknown, accept = 'application/json'): Promise<Response> {
    const headers: Record<string, string> = { Accept: accept, Authorization: `Bearer ${this.#token}` };
    if (json !== undefined) headers['Content-Type'] = 'application/json';
    try {
      return await this.#fetch(new URL(path, this.#baseUrl), {
        method,
        headers,
        ...(json === undefined ? {} : { body: JSON.stringify(json) }),
        // The token is the only credential; never send or store cookies.
        credentials: 'omit',
        cache: 'no-store',
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (cause) {
      if (cause instanceof DOMException && cause.name === 'AbortError') {
        throw new ApiError('aborted', 'The request was cancelled.', 0);
      }
      throw new ApiError('network', 'The server could not be reached.', 0);
    }
  }

  /**
   * Sends `file` as the body of a POST. An XMLHttpRequest, not a fetch, because only it
   * reports upload progress: `progress(sent, total)` is called as the bytes leave.
   * Aborting `signal`, or locking this client, stops the transfer.
   */
  #upload(path: string, file: Blob, progress?: (sent: number, total: number) => void, signal?: AbortSignal): Promise<unknown> {
    if (this.#ending.signal.aborted) return Promise.reject(new ApiError('aborted', 'The request was cancelled.', 0));
    const guarded = this.#unlessEnding(signal);
    return new Promise<unknown>((resolve, reject) => {
      if (guarded.signal.aborted) {
        reject(new ApiError('aborted', 'The request was cancelled.', 0));
        return;
      }
      const xhr = new XMLHttpRequest();
      xhr.open('POST', new URL(path, this.#baseUrl));
      xhr.setRequestHeader('Authorization', `Bearer ${this.#token}`);
      xhr.setRequestHeader('Accept', 'application/json');
      xhr.setRequestHeader('Content-Type', 'application/octet-stream');
      xhr.withCredentials = false;
      if (progress) xhr.upload.addEventListener('progress', (event) => progress(event.loaded, event.lengthComputable ? event.total : file.size));
      xhr.addEventListener('load', () => {
        let body: unknown;
        try {
          body = xhr.responseText === '' ? undefined : (JSON.parse(xhr.responseText) as unknown);
        } catch {
          body = undefined;
        }
        if (xhr.status >= 200 && xhr.status < 300) resolve(body);
        else if (isErrorBody(body)) reject(new ApiError(body.error.code, body.error.message, xhr.status));
        else reject(new ApiError(`http_${xhr.status}`, `The server answered ${xhr.status} ${xhr.statusText}`.trim(), xhr.status));
      });
      xhr.addEventListener('error', () => reject(new ApiError('network', 'The server could not be reached.', 0)));
      xhr.addEventListener('abort', () => reject(new ApiError('aborted', 'The request was cancelled.', 0)));
      guarded.signal.addEventListener('abort', () => xhr.abort(), { once: true });
      xhr.send(file);
    }).finally(() => guarded.done());
  }

  /** Throws the error an unsuccessful answer carries. */
  async #fail(response: Response): Promise<never> {
    const body = await readJson(response);
    if (isErrorBody(body)) {
      throw new ApiError(body.error.code, body.error.message, response.status, retryAfterOf(response));
    }
    throw new ApiError(
      `http_${response.status}`,
      `The server answered ${response.status} ${response.statusText}`.trim(),
      response.status,
      retryAfterOf(response),
    );
  }
}

/** The parsed body, or `undefined` when it is empty or not JSON. */
async function readJson(response: Response): Promise<unknown> {
  try {
    const text = await response.text();
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
}

function unexpected(what: string): ApiError {
  return new ApiError('bad_response', `The server sent an unexpected ${what} answer.`, 200);
}

function unlocked(body: unknown): Unlocked {
  if (!isUnlocked(body)) throw unexpected('login');
  return body;
}

function record(body: unknown, what: string): Record<string, unknown> {
  if (!isRecord(body)) throw unexpected(what);
  return body;
}

function enrolment(body: unknown): Enrolment {
  if (!isRecord(body) || typeof body['enrolment_code'] !== 'string' || !isRecord(body['user'])) throw unexpected('enrolment');
  return body as unknown as Enrolment;
}

function documentOf(body: unknown): Document {
  if (!isRecord(body) || typeof body['id'] !== 'string' || typeof body['status'] !== 'string') throw unexpected('document');
  return body as unknown as Document;
}

function edge(body: unknown): SupervisionEdge {
  if (!isRecord(body) || typeof body['id'] !== 'string' || typeof body['state'] !== 'string') throw unexpected('supervision');
  return body as unknown as SupervisionEdge;
}

/** A rule as the server takes it: no empty optional patterns. */
function ruleBody(rule: RuleInput): Record<string, unknown> {
  const args = typeof rule.args === 'string' ? rule.args.trim() : rule.args;
  const role = rule.role ?? '';
  const none = args === null || args === undefined || args === '' || (typeof args === 'object' && Object.keys(args).length === 0);
  return {
    tool: rule.tool.trim(),
    effect: rule.effect,
    priority: rule.priority,
    ...(none ? {} : { args }),
    ...(role === '' ? {} : { role }),
  };
}

function list(body: unknown, what: string): unknown[] {
  if (!Array.isArray(body)) throw unexpected(what);
  return body;
}

/** base64url without padding, of the token's UTF-8 bytes. */
function base64Url(text: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function isHealth(value: unknown): value is Health {
  return isRecord(value) && typeof value['status'] === 'string' && typeof value['version'] === 'string';
}

function isErrorBody(value: unknown): value is { error: { code: string; message: string } } {
  if (!isRecord(value)) return false;
  const error = value['error'];
  return isRecord(error) && typeof error['code'] === 'string' && typeof error['message'] === 'string';
}

/** A turn just started (202 of send, retry, resend and regenerate). */
function started(body: unknown, what: string): { readonly turn: string; readonly message: number } {
  if (!isRecord(body) || typeof body['turn'] !== 'string') throw unexpected(what);
  return { turn: body['turn'], message: Number(body['message']) };
}
