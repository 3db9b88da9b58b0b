import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isWarmUpRequest } from './warm-up.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** `performance.now()` when the request arrived (for the line of a request its client gave up). */
    arrivedAt: number;
    /** Whether its answer has left (and its line been written). */
    answered: boolean;
  }
}

/** One finished request, for metrics: its method, route pattern, status and seconds taken. */
type ObserveRequest = (method: string, route: string, status: number, seconds: number) => void;

const roundedMs = (ms: number) => Math.round(ms * 10) / 10;

/**
 * One log line a request: method, the route pattern (never the URL: a signed receipt URL or a
 * search term must not end up in the logs), status and duration, plus `who` sent it (never a
 * key or token). A request whose client reset its connection before the answer was written is
 * never answered, so it has no status: it gets a line of its own, `request aborted by the
 * client`, with the time it had run (a client that closes its side normally gets its answer
 * written and the usual line; see `routeEveryRequest`); so does one whose body stopped arriving
 * for the request timeout, cut off by the server: `request timed out: its body did not arrive
 * in time`, and one whose body ended early or broke its framing: `request refused: its body was
 * cut short or not valid HTTP`.
 */
export function logEachRequest(
  app: FastifyInstance,
  who: (request: FastifyRequest) => object,
  observe?: ObserveRequest,
): void {
  app.decorateRequest('arrivedAt', 0);
  app.decorateRequest('answered', false);
  app.addHook('onRequest', (request, _reply, done) => {
    request.arrivedAt = performance.now();
    done();
  });
  app.addHook('onResponse', async (request, reply) => {
    request.answered = true;
    if (isWarmUpRequest(request)) return;
    const route = request.routeOptions.url ?? '(unmatched)';
    request.log.info(
      {
        method: request.method,
        route,
        status: reply.statusCode,
        durationMs: roundedMs(reply.elapsedTime),
        ...who(request),
      },
      'request',
    );
    observe?.(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
  });
  app.addHook('onRequestAbort', async (request) => {
    // Node aborts a request whose connection closes before its body ended, answered or not
    // (a body with broken framing, after its route's answer).
    if (request.answered) return;
    // A body that stopped arriving for the request timeout, or broke its framing, is cut off
    // by the server (`answerClientErrors`), and no answer can follow a request that never ended.
    const cut = request.raw.errored as (Error & { code?: string; statusCode?: number }) | null;
    const cutStatus = cut?.code === 'ERR_BODY_CUT_SHORT' ? cut.statusCode : undefined;
    request.log.info(
      {
        method: request.method,
        route: request.routeOptions.url ?? '(unmatched)',
        // A body cut short or broken is answered in place of its route (`answerClientErrors`).
        ...(cutStatus === 400 ? { status: 400 } : {}),
        // No time for one cut off before its hooks ran (in the tick its head was read).
        durationMs: request.arrivedAt > 0 ? roundedMs(performance.now() - request.arrivedAt) : 0,
        ...who(request),
      },
      cutStatus === 408
        ? 'request timed out: its body did not arrive in time'
        : cutStatus === 400
          ? 'request refused: its body was cut short or not valid HTTP'
          : 'request aborted by the client',
    );
  });
}
