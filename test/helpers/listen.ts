import type { FastifyInstance } from 'fastify';
import type { TestApi } from './api.ts';

/**
 * Closes an app that may be listening, closing idle connections every 50 ms meanwhile as
 * `cdapi serve` does (src/http/closing.ts): server.close() closes the connections idle at that
 * moment, and one whose answer was still leaving (a receipt file the client has read whole)
 * turns idle a moment later, then held the close for the client's keep-alive (35 s).
 */
export async function closeApp(app: FastifyInstance): Promise<void> {
  const reaper = setInterval(() => app.server.closeIdleConnections(), 50);
  try {
    await app.close();
  } finally {
    clearInterval(reaper);
  }
}

/** Makes the app listen on an ephemeral loopback port; returns its API base URL. */
export async function listenApi(api: TestApi): Promise<string> {
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = api.app.server.address() as { port: number };
  return `http://127.0.0.1:${port}/api/company/v1`;
}

/** Counts the app's answers by status code, from now on (hooks must be added before listening). */
export function countStatuses(api: TestApi): Map<number, number> {
  const counts = new Map<number, number>();
  api.app.addHook('onResponse', async (_request, reply) => {
    counts.set(reply.statusCode, (counts.get(reply.statusCode) ?? 0) + 1);
  });
  return counts;
}
