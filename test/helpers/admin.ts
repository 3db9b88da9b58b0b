import type { TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildAdminApp } from '../../src/admin/admin-app.ts';
import { ADMIN_DOCUMENT_PATH } from '../../src/admin/openapi.ts';
import { adminToken } from '../../src/admin-tokens.ts';
import type { ServerConfig } from '../../src/config.ts';
import type { Dialect } from '../../src/db/connect.ts';
import { closeGracefully } from '../../src/http/closing.ts';
import { DISPLAY_PREFIX_LENGTH } from '../../src/keys/api-key.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { loggerOptions } from '../../src/server.ts';
import { type ApiResponse, type TestApi, useApi } from './api.ts';
import { type ContractChecker, createContractChecker } from './contract.ts';
import { leaksIn } from './log-leaks.ts';

export const ADMIN_TOKEN = 'admin-test-token-0123456789abcdefghijkl';
export const PREVIOUS_ADMIN_TOKEN = 'previous-admin-test-token-0123456789abc';

/** An admin token as the configuration keeps it (digests, never the token). */
export const tokenOf = (label: string, token: string) => adminToken('ADMIN_TOKEN', token, label);

export interface AdminRequest {
  /** Defaults to ADMIN_TOKEN; null sends no Authorization header. */
  token?: string | null;
  /** A JSON body, or a Buffer sent as it is (with `contentType`). */
  body?: unknown;
  contentType?: string;
  remoteAddress?: string;
  /** Sent as they are, beside the ones above (a list: one header line each). */
  headers?: Record<string, string | string[]>;
}

export interface TestAdmin {
  api: TestApi;
  admin: FastifyInstance;
  /** The admin listener's log lines, parsed. */
  logLines(): Array<Record<string, unknown>>;
  call(method: string, path: string, request?: AdminRequest): Promise<ApiResponse>;
}

/**
 * The public app (`useApi`) and the admin app over the same database. Every admin answer is
 * checked against the admin document when the test ends, and the admin log must then hold
 * neither token nor any raw key it handed out (nor the part of one past its prefix).
 */
export async function useAdmin(
  t: TestContext,
  dialect: Dialect,
  options: { records?: unknown[]; config?: Partial<ServerConfig> } = {},
): Promise<TestAdmin> {
  const api = await useApi(t, dialect, options);
  const lines: string[] = [];
  const logger = pino(loggerOptions('trace'), { write: (line: string) => lines.push(line) });
  const admin = await buildAdminApp({
    config: { ...api.config, ...options.config },
    database: api.handle,
    receipts: new FileReceiptStore(api.config.receiptsDir),
    tokens: [tokenOf('platform', ADMIN_TOKEN), tokenOf('platform:previous', PREVIOUS_ADMIN_TOKEN)],
    logger,
  });
  const connections = closeGracefully(admin.server, api.config);
  const secrets = new Set([ADMIN_TOKEN, PREVIOUS_ADMIN_TOKEN]);
  const nonconforming: string[] = [];
  let contract: ContractChecker | null = null;
  t.after(async () => {
    await connections.during(admin.close());
    const failures: string[] = [];
    const leaked = leaksIn(lines.join(''), secrets);
    if (leaked.secrets.length > 0 || leaked.canaries.length > 0) {
      failures.push(`the admin log holds ${leaked.secrets.length} secret(s)`);
    }
    if (nonconforming.length > 0) {
      failures.push(
        `answers that do not conform to the admin document:\n${nonconforming.join('\n')}`,
      );
    }
    if (failures.length > 0) throw new Error(failures.join('\n'));
  });
  return {
    api,
    admin,
    logLines: () => lines.map((line) => JSON.parse(line)),
    async call(method, path, request = {}) {
      const headers: Record<string, string | string[]> = { ...request.headers };
      const token = request.token === undefined ? ADMIN_TOKEN : request.token;
      if (token !== null) headers.authorization = `Bearer ${token}`;
      let payload: string | Buffer | undefined;
      if (Buffer.isBuffer(request.body)) payload = request.body;
      else if (request.body !== undefined) payload = JSON.stringify(request.body);
      if (payload !== undefined)
        headers['content-type'] = request.contentType ?? 'application/json';
      const response = await admin.inject({
        method: method as 'GET',
        url: path,
        headers,
        payload,
        remoteAddress: request.remoteAddress,
      });
      let json: ReturnType<typeof JSON.parse>;
      try {
        json = response.body ? JSON.parse(response.body) : undefined;
      } catch {
        json = undefined;
      }
      const raw = json?.data?.key;
      if (typeof raw === 'string') secrets.add(raw).add(raw.slice(DISPLAY_PREFIX_LENGTH));
      contract ??= createContractChecker((await admin.inject(ADMIN_DOCUMENT_PATH)).json(), [
        'GET',
        'HEAD',
        'POST',
      ]);
      const problems = contract.check({
        method,
        path,
        status: response.statusCode,
        headers: response.headers,
        body: response.rawPayload,
      });
      if (problems.length > 0) nonconforming.push(`  ${method} ${path}: ${problems.join('; ')}`);
      return { status: response.statusCode, headers: response.headers, body: response.body, json };
    },
  };
}
