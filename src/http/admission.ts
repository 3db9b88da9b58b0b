import type { FastifyReply } from 'fastify';
import { busy, ClientGoneError } from './errors.ts';

/**
 * Bounds the data requests an instance works on at once. Past `maxConcurrent`, requests wait
 * in arrival order; when `maxQueued` already wait, or one has waited `maxWaitMs`, the request
 * is answered 503 `service_unavailable` with `Retry-After` at once. An overloaded instance
 * thus answers every request quickly, some with "come back in a second", instead of letting
 * all of them wait many seconds behind each other (and a load balancer can send the retry to
 * an instance with room).
 */
export class Admission {
  #running = 0;
  private readonly waiting = new Set<() => void>();

  private readonly maxConcurrent: number;
  private readonly maxQueued: number;
  private readonly maxWaitMs: number;

  constructor(maxConcurrent: number, maxQueued: number, maxWaitMs: number) {
    this.maxConcurrent = maxConcurrent;
    this.maxQueued = maxQueued;
    this.maxWaitMs = maxWaitMs;
  }

  /** Requests being worked on. */
  get running(): number {
    return this.#running;
  }

  /** Requests waiting for their turn. */
  get queued(): number {
    return this.waiting.size;
  }

  /**
   * Resolves, once the request may run, with the function that gives its place to the next
   * (at most once: call it when the answer is made; however the response ends, it is called
   * then); rejects with the 503 when it may not run.
   */
  async enter(reply: FastifyReply): Promise<() => void> {
    if (this.#running < this.maxConcurrent && this.waiting.size === 0) return this.admit(reply);
    if (this.waiting.size >= this.maxQueued) throw busy();
    return await new Promise<() => void>((resolve, reject) => {
      const leaveQueue = () => {
        clearTimeout(timer);
        this.waiting.delete(admitted);
        reply.raw.off('close', gaveUp);
      };
      const admitted = () => {
        leaveQueue();
        resolve(this.admit(reply));
      };
      const timer = setTimeout(() => {
        leaveQueue();
        reject(busy());
      }, this.maxWaitMs);
      // A client that hangs up while waiting gives its place away.
      const gaveUp = () => {
        leaveQueue();
        reject(new ClientGoneError('the client closed the connection while waiting'));
      };
      reply.raw.once('close', gaveUp);
      this.waiting.add(admitted);
    });
  }

  private admit(reply: FastifyReply): () => void {
    this.#running++;
    let left = false;
    const leave = () => {
      if (left) return;
      left = true;
      reply.raw.off('close', leave);
      this.#running--;
      const next = this.waiting.values().next();
      if (!next.done) next.value();
    };
    // However the response ends, if its answer was never made: failed or cut off by the client.
    reply.raw.once('close', leave);
    return leave;
  }
}
