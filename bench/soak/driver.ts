import { Agent, request } from 'node:http';
import type { SoakCall } from './mix.ts';

/**
 * A request still unanswered after this is a timeout, and an error. Longer than the service's
 * own limit on a PostgreSQL query (DATABASE_STATEMENT_TIMEOUT_MS, 10 s by default), so a call
 * the service gives up on shows as its answer (503), not as ours.
 */
const REQUEST_TIMEOUT_MS = 30_000;
/** Sockets kept to the service; far more than the rate needs unless it stalls. */
const MAX_SOCKETS = 64;
const IDLE_SOCKET_MS = 30_000;

export interface CallOutcome {
  /** The status the call ended on (of the file for a receipt download), or null. */
  status: number | null;
  /** Why the call failed (wrong status, transport error, timeout), or null when it did not. */
  failure: string | null;
  /** From handing the request to the HTTP agent to the last byte of the answer. */
  latencyMs: number;
}

interface Answer {
  status: number;
  location: string | undefined;
}

/**
 * Sends the mix's calls to the service with keep-alive connections, as an integrator's HTTP
 * library does. Every answer is read to its end and thrown away.
 */
export class SoakClient {
  /**
   * Idle connections are dropped before the keep-alive timeout the service announces (36 s),
   * as a well-behaved client does; Node 20's agent ignores the announcement and would keep them
   * until the service closes one under a request.
   */
  private readonly agent = new Agent({
    keepAlive: true,
    maxSockets: MAX_SOCKETS,
    timeout: IDLE_SOCKET_MS,
  });

  private readonly baseUrl: string;
  private readonly keys: ReadonlyMap<number, string>;

  constructor(baseUrl: string, keys: ReadonlyMap<number, string>) {
    this.baseUrl = baseUrl;
    this.keys = keys;
  }

  async send(call: SoakCall): Promise<CallOutcome> {
    const started = performance.now();
    const outcome = (status: number | null, failure: string | null): CallOutcome => ({
      status,
      failure,
      latencyMs: performance.now() - started,
    });
    try {
      const encoding = { 'accept-encoding': call.gzip ? 'gzip' : 'identity' };
      const answer = await this.get(`${this.baseUrl}${call.path}`, {
        ...encoding,
        authorization: `Bearer ${this.keys.get(call.companyId)}`,
      });
      if (answer.status !== call.expectedStatus) {
        return outcome(answer.status, `${answer.status} (expected ${call.expectedStatus})`);
      }
      if (call.kind !== 'receipt-download') return outcome(answer.status, null);
      // The signed URL needs no key: sent without one, as `curl -L` does across hosts.
      if (answer.location === undefined) return outcome(answer.status, 'a 302 without Location');
      const file = await this.get(answer.location, encoding);
      return outcome(
        file.status,
        file.status === 200 ? null : `file ${file.status} (expected 200)`,
      );
    } catch (error) {
      const { code, name, message } = error as NodeJS.ErrnoException;
      return outcome(
        null,
        name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : (code ?? message),
      );
    }
  }

  close(): void {
    this.agent.destroy();
  }

  private get(url: string, headers: Record<string, string>): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = request(
        url,
        { agent: this.agent, headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) },
        (res) => {
          res.on('data', () => {});
          res.on('error', reject);
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, location: res.headers.location }),
          );
        },
      );
      req.on('error', (error: NodeJS.ErrnoException) => {
        // A reset on a kept-alive connection: the server closed it as this request went out.
        if (req.reusedSocket && error.code === 'ECONNRESET')
          error.code = 'ECONNRESET (reused connection)';
        reject(error);
      });
      req.end();
    });
  }
}

export interface OpenLoopSettings {
  ratePerSecond: number;
  durationSeconds: number;
}

/**
 * Open loop: call i is sent at start + i / rate whatever happened to the calls before it, so a
 * slow service meets the same rate (and its queue shows in the latencies) instead of slowing
 * the load down. `onSent` hears how late each call left (the load generator's own lag);
 * resolves when every call has been answered or has failed.
 */
export function runOpenLoop(
  settings: OpenLoopSettings,
  nextCall: () => SoakCall,
  send: (call: SoakCall) => Promise<void>,
  onSent: (lagMs: number) => void,
): Promise<void> {
  const total = Math.round(settings.ratePerSecond * settings.durationSeconds);
  const spacingMs = 1000 / settings.ratePerSecond;
  const start = performance.now();
  let sent = 0;
  let pending = 0;
  return new Promise((resolve) => {
    const finishIfDone = () => {
      if (sent === total && pending === 0) resolve();
    };
    const tick = () => {
      const now = performance.now();
      while (sent < total && start + sent * spacingMs <= now) {
        onSent(now - (start + sent * spacingMs));
        sent++;
        pending++;
        void send(nextCall()).finally(() => {
          pending--;
          finishIfDone();
        });
      }
      if (sent < total) setTimeout(tick, Math.max(0, start + sent * spacingMs - performance.now()));
      else finishIfDone();
    };
    tick();
  });
}
