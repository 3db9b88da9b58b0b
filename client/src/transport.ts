import { ApiError, apiErrorOf, ReceiptError } from './errors.ts';
import { nextRequestAllowedAt } from './rate-limit.ts';
import { sleep } from './sleep.ts';

/** What every call accepts: a signal to cancel it and a time limit for each attempt. */
export interface CallOptions {
  signal?: AbortSignal | undefined;
  /** Milliseconds one attempt may take before it is abandoned and retried (default: the client's). */
  timeoutMs?: number | undefined;
}

/** Why the client is about to wait, and how long. */
export interface Wait {
  /** `rate_limit`: a `RateLimit` window is empty; `retry`: after a 429, a 503 or a network failure. */
  reason: 'rate_limit' | 'retry';
  ms: number;
  /** The status that is retried (absent for a network failure and for pacing). */
  status?: number;
  /**
   * What failed, in a few words, where no answer is retried: `network failure (ECONNRESET)`,
   * `no whole answer within 30 s`, `the answer arrived cut short`, `the receipt arrived cut
   * short (1024 of 40960 bytes)`.
   */
  failure?: string;
  /** The attempt that failed, from 1. */
  attempt?: number;
}

export interface TransportOptions {
  baseUrl: string;
  apiKey: string;
  maxRetries: number;
  timeoutMs: number;
  compress: boolean;
  onWait?: ((wait: Wait) => void) | undefined;
}

/** A query value: arrays are sent as comma lists, `undefined` leaves the parameter out. */
export type QueryValue = string | number | boolean | readonly (string | number)[] | undefined;

const BACKOFF_BASE_MS = 250;
const BACKOFF_CAP_MS = 30_000;

/** A failed attempt in a few words: the cause a `Wait` names. */
function failureOf(error: unknown, timeoutMs: number): string {
  if (error instanceof ReceiptError) return error.message;
  const { name, message } = (error ?? {}) as Partial<Error>;
  if (name === 'TimeoutError') return `no whole answer within ${timeoutMs / 1000} s`;
  // fetch's body, ended before its end (a reset, a close, fewer bytes than its length): the
  // cause is undici's own code (UND_ERR_RES_CONTENT_LENGTH_MISMATCH), which says less.
  if (name === 'TypeError' && message === 'terminated') return 'the answer arrived cut short';
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return typeof code === 'string' ? `network failure (${code})` : 'network failure';
}

/** Full jitter: a random wait up to an exponentially growing ceiling. */
function backoffMs(attempt: number): number {
  return Math.random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** attempt);
}

function retryAfterMs(response: Response): number | undefined {
  const value = response.headers.get('retry-after');
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/**
 * Reads a small body to its end, so its connection goes back to the pool; a cancelled body
 * leaves the connection busy, and the server waits for it when it shuts down.
 */
export async function drain(response: Response): Promise<void> {
  await response.arrayBuffer().catch(() => {});
}

export function searchParamsOf(query: Record<string, QueryValue> | undefined): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value) && value.length === 0) {
      throw new TypeError(
        `${name}: an empty list matches no record; leave the filter out to list them all`,
      );
    }
    params.set(name, Array.isArray(value) ? value.join(',') : String(value));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/**
 * What is wrong with a base URL, if anything: it must be an http:// or https:// URL without a
 * user name or password (fetch refuses one with them, and its error would show the password;
 * the key is the one credential). The callers' messages never echo a password.
 */
export function baseUrlProblem(baseUrl: unknown): 'not http' | 'credentials' | 'query' | null {
  let url: URL | null = null;
  try {
    url = new URL(String(baseUrl));
  } catch {}
  if (!url || !/^https?:$/.test(url.protocol)) return 'not http';
  if (url.username !== '' || url.password !== '') return 'credentials';
  // Paths are appended to it: `…/v1?x=1` + `/employees` names no resource.
  return /[?#]/.test(String(baseUrl)) ? 'query' : null;
}

/** The longest wait a 429 or 503 may ask for: the key's longest window, an hour. */
const LONGEST_RETRY_AFTER_MS = 3_600_000;
/** The most `timeoutMs` may be: what a timer can wait (about 24.8 days). */
const LONGEST_TIMEOUT_MS = 2 ** 31 - 1;
const MOST_RETRIES = 100;
/** The statuses fetch follows as redirects. */
const REDIRECTS = [301, 302, 303, 307, 308];

/**
 * A fetch failure no later attempt can mend: fetch refuses the port outright, or the redirects
 * go round (a signed URL's host answering with another redirect, twenty times over).
 */
export const refusedForGood = (error: unknown): boolean =>
  error instanceof TypeError &&
  ['bad port', 'redirect count exceeded'].includes(
    (error.cause as Error | undefined)?.message ?? '',
  );

/** Checks a `timeoutMs` given to the client or to one call. */
function checkTimeout(timeoutMs: unknown): void {
  if (
    !Number.isInteger(timeoutMs) ||
    (timeoutMs as number) < 1 ||
    (timeoutMs as number) > LONGEST_TIMEOUT_MS
  ) {
    throw new TypeError(
      `timeoutMs must be a whole number of milliseconds from 1 to ${LONGEST_TIMEOUT_MS}, got ${String(timeoutMs)}`,
    );
  }
}

/**
 * Sends GET requests with the key, retrying what a later attempt can fix: a 429 after its
 * `Retry-After`, a 503 or a network failure (a timeout included) after `Retry-After` or an
 * exponential backoff with jitter, at most `maxRetries` times. It also paces itself: when an
 * answer's `RateLimit` header says a window has no request left, the next request waits until
 * a slot frees instead of collecting a 429.
 */
export class Transport {
  readonly baseUrl: string;
  private readonly options: TransportOptions;
  private notBefore = 0;

  constructor(options: TransportOptions) {
    if (typeof options.apiKey !== 'string' || options.apiKey.trim() === '') {
      throw new TypeError(
        'apiKey is required: the API key, a string (such as process.env.CDAPI_KEY)',
      );
    }
    const problem = baseUrlProblem(options.baseUrl);
    if (problem === 'not http') {
      throw new TypeError(
        'baseUrl must be an http:// or https:// URL, such as http://127.0.0.1:8080/api/company/v1',
      );
    }
    if (problem === 'credentials') {
      throw new TypeError(
        'baseUrl must not hold a user name or password (not shown here): the API key is the only credential',
      );
    }
    if (problem === 'query') {
      throw new TypeError(
        'baseUrl must not hold a query (?) or a fragment (#): paths are appended to it, such as http://127.0.0.1:8080/api/company/v1',
      );
    }
    if (
      !Number.isInteger(options.maxRetries) ||
      options.maxRetries < 0 ||
      options.maxRetries > MOST_RETRIES
    ) {
      throw new TypeError(
        `maxRetries must be a whole number from 0 to ${MOST_RETRIES}, got ${String(options.maxRetries)}`,
      );
    }
    checkTimeout(options.timeoutMs);
    // Checked here, not by fetch: its error would hold the header, the key in it.
    if (!/^[\x21-\x7e]+$/.test(options.apiKey.trim())) {
      throw new TypeError(
        'the API key holds a line break, a space or another character an HTTP header cannot carry (not shown here): check how it was set',
      );
    }
    this.options = { ...options, apiKey: options.apiKey.trim() };
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
  }

  /** GET `path` (relative to the base URL, or absolute) with the key; a non-2xx throws ApiError. */
  get(
    path: string,
    query: Record<string, QueryValue> | undefined,
    call: CallOptions = {},
    init: { redirect?: 'follow' | 'manual'; withKey?: boolean } = {},
  ): Promise<Response> {
    return this.request(path, query, call, init, async (response) => response);
  }

  /** `get`, with its body read as `read` says: a body cut short is retried like a failed fetch. */
  getBody<T>(
    path: string,
    query: Record<string, QueryValue> | undefined,
    call: CallOptions,
    read: (response: Response) => Promise<T>,
    init: { withKey?: boolean } = {},
  ): Promise<T> {
    return this.request(path, query, call, init, read);
  }

  private async request<T>(
    path: string,
    query: Record<string, QueryValue> | undefined,
    call: CallOptions,
    init: { redirect?: 'follow' | 'manual'; withKey?: boolean },
    read: (response: Response) => Promise<T>,
  ): Promise<T> {
    const url = /^https?:\/\//.test(path) ? path : `${this.baseUrl}${path}${searchParamsOf(query)}`;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (!this.options.compress) headers['accept-encoding'] = 'identity';
    if (init.withKey !== false) headers.authorization = `Bearer ${this.options.apiKey}`;
    if (call.timeoutMs !== undefined) checkTimeout(call.timeoutMs);
    const timeoutMs = call.timeoutMs ?? this.options.timeoutMs;
    // Only the key's requests count against its limits: a signed receipt URL (no key) is
    // fetched at once, before it expires, whatever the key's windows say.
    const counted = init.withKey !== false;
    for (let attempt = 0; ; attempt++) {
      if (counted) await this.waitForRateLimit(call.signal);
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = call.signal ? AbortSignal.any([call.signal, timeout]) : timeout;
      const retryAfterFailure = async (error: unknown) => {
        if (call.signal?.aborted) throw call.signal.reason;
        if (attempt >= this.options.maxRetries || refusedForGood(error)) throw error;
        const delay = backoffMs(attempt);
        this.options.onWait?.({
          reason: 'retry',
          ms: delay,
          failure: failureOf(error, timeoutMs),
          attempt: attempt + 1,
        });
        await sleep(delay, call.signal);
      };
      let response: Response;
      try {
        // The API's own answers never redirect (but the receipt's, read as `manual`): a
        // redirect elsewhere would lose the key, and its answer is not the API's.
        const redirect = init.redirect ?? (init.withKey === false ? 'follow' : 'manual');
        response = await fetch(url, { headers, signal, redirect });
      } catch (error) {
        await retryAfterFailure(error);
        continue;
      }
      if (counted)
        this.notBefore = Math.max(this.notBefore, nextRequestAllowedAt(response.headers));
      if (response.ok || (init.redirect === 'manual' && response.status === 302)) {
        try {
          return await read(response);
        } catch (error) {
          // The connection failed or the time ran out while the body arrived (fetch's
          // TypeError, the timeout's TimeoutError), or a receipt stops short of its end; a
          // body that is not what it should be is not made right by asking again.
          const name = (error as Error | undefined)?.name;
          const cutShort = error instanceof ReceiptError && error.incomplete;
          if (
            !(
              cutShort ||
              error instanceof TypeError ||
              name === 'TimeoutError' ||
              name === 'AbortError'
            )
          )
            throw error;
          await retryAfterFailure(error);
          continue;
        }
      }
      // fetch follows the file URL's redirects itself; a 304 is no redirect.
      if (init.withKey !== false && REDIRECTS.includes(response.status)) {
        await drain(response);
        const location = response.headers.get('location') ?? 'nowhere';
        throw new ApiError({
          status: response.status,
          code: `http_${response.status}`,
          detail: `the API answered a redirect (to ${location}), which the client does not follow: is baseUrl the API's own address?`,
          requestId: response.headers.get('x-request-id') ?? undefined,
        });
      }
      const wait = retryAfterMs(response);
      const retried = response.status === 429 || response.status === 503;
      // Longer than any window: not a wait worth making, told at once, and said so.
      const tooLong = retried && wait !== undefined && wait > LONGEST_RETRY_AFTER_MS;
      if (retried && attempt < this.options.maxRetries && !tooLong) {
        await drain(response);
        const delay =
          response.status === 429
            ? (wait ?? 1000) + Math.random() * BACKOFF_BASE_MS
            : (wait ?? 0) + backoffMs(attempt);
        this.options.onWait?.({
          reason: 'retry',
          ms: delay,
          status: response.status,
          attempt: attempt + 1,
        });
        await sleep(delay, call.signal);
        continue;
      }
      throw await apiErrorOf(
        response,
        tooLong
          ? `not retried: its Retry-After asks for ${Math.ceil((wait ?? 0) / 1000)} s, more than the hour within which every window frees`
          : undefined,
      );
    }
  }

  getJson<T>(
    path: string,
    query: Record<string, QueryValue> | undefined,
    call: CallOptions = {},
  ): Promise<T> {
    return this.getBody(path, query, call, async (response) => (await response.json()) as T);
  }

  private async waitForRateLimit(signal: AbortSignal | undefined): Promise<void> {
    // A window frees within the hour, whatever a header said.
    const wait = Math.min(this.notBefore - Date.now(), LONGEST_RETRY_AFTER_MS);
    if (wait <= 0) return;
    this.options.onWait?.({ reason: 'rate_limit', ms: wait });
    await sleep(wait, signal);
  }
}
