/**
 * The typed client for Skald's HTTP API (see shared/contract.md).
 *
 * Owns: the bearer token for the session, request and response shapes, and
 * turning every failure into an `ApiError`. Never: stores the token anywhere
 * but this object's private field, nor puts it in a URL, nor logs it.
 */

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
  ) {
    super(message);
  }
}

/** What the constructor may be given besides the token; for tests and embedding. */
export interface ApiClientOptions {
  /** Origin and prefix to resolve `/api/...` against; the page's origin by default. */
  readonly baseUrl?: string;
  readonly fetch?: typeof fetch;
}

/** Milestones the page reports to the server's log. */
export type ClientEvent = 'rendered';

/** Talks to one Skald server with one bearer token. */
export class ApiClient {
  // An ES private field: not enumerable, not reachable from outside, not
  // serialised by accident.
  readonly #token: string;
  readonly #baseUrl: string;
  readonly #fetch: typeof fetch;

  constructor(token: string, options: ApiClientOptions = {}) {
    this.#token = token;
    this.#baseUrl = options.baseUrl ?? window.location.origin;
    // Bound, because a bare `fetch` called as a method throws "Illegal invocation".
    this.#fetch = options.fetch ?? window.fetch.bind(window);
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

  async #request(method: string, path: string, signal?: AbortSignal, json?: unknown): Promise<unknown> {
    let response: Response;
    const headers: Record<string, string> = { Accept: 'application/json', Authorization: `Bearer ${this.#token}` };
    if (json !== undefined) headers['Content-Type'] = 'application/json';
    try {
      response = await this.#fetch(new URL(path, this.#baseUrl), {
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

    const body = await readJson(response);
    if (response.status === 204) return undefined;
    if (response.ok) {
      if (body === undefined) {
        throw new ApiError('bad_response', 'The server sent an answer that is not JSON.', response.status);
      }
      return body;
    }
    if (isErrorBody(body)) {
      throw new ApiError(body.error.code, body.error.message, response.status);
    }
    throw new ApiError(
      `http_${response.status}`,
      `The server answered ${response.status} ${response.statusText}`.trim(),
      response.status,
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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isHealth(value: unknown): value is Health {
  return isRecord(value) && typeof value['status'] === 'string' && typeof value['version'] === 'string';
}

function isErrorBody(value: unknown): value is { error: { code: string; message: string } } {
  if (!isRecord(value)) return false;
  const error = value['error'];
  return isRecord(error) && typeof error['code'] === 'string' && typeof error['message'] === 'string';
}
