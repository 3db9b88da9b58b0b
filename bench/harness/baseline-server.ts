/**
 * The baselines' server, run as a child process (see baselines.ts) so it has an event loop of
 * its own, as the service does. It receives one page of the API's JSON over IPC and answers it
 * on two paths: `/prebuilt` (bytes serialized once, the floor for any cache) and `/stringify`
 * (JSON.stringify on every request, the floor for a handler that builds its answer). It
 * replies with its port, and exits when the parent disconnects.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

function serve(page: unknown): void {
  const prebuilt = Buffer.from(JSON.stringify(page));
  const server = createServer((request, response) => {
    const body = request.url === '/prebuilt' ? prebuilt : JSON.stringify(page);
    response.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-store',
    });
    response.end(body);
  });
  server.listen(0, '127.0.0.1', () => {
    process.send?.({ port: (server.address() as AddressInfo).port });
  });
}

process.once('message', serve);
process.once('disconnect', () => process.exit(0));
