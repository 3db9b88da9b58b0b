import type { TestApi } from './api.ts';

/**
 * Makes the app listen on an ephemeral loopback port; returns its API base URL. While it
 * closes, idle connections are closed every 100 ms as `cdapi serve` does (src/server.ts): a
 * keep-alive connection that served a receipt file turns idle only after close() began, and
 * would otherwise hold the test for the whole keep-alive timeout.
 */
export async function listenApi(api: TestApi): Promise<string> {
  let reaper: NodeJS.Timeout | undefined;
  api.app.addHook('preClose', async () => {
    reaper = setInterval(() => api.app.server.closeIdleConnections(), 100);
  });
  api.app.addHook('onClose', async () => clearInterval(reaper));
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
