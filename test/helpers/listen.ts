import type { TestApi } from './api.ts';

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
