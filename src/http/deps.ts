import { isIPv4, isIPv6 } from 'node:net';
import type { FastifyRequest } from 'fastify';
import type { ServerConfig } from '../config.ts';
import type { DataVersions } from '../db/data-versions.ts';
import type { Db } from '../db/database.ts';
import type { ReceiptUrls } from '../db/expenses.queries.ts';
import type { ListCaches, ListSource } from '../db/list-source.ts';
import type { SqliteReaders } from '../db/sqlite-readers.ts';
import type { ReceiptStore } from '../receipts/store.ts';
import type { Admission } from './admission.ts';
import { type Authenticator, headerLines } from './auth.ts';
import { type ApiError, unusableHost } from './errors.ts';
import type { ResponseCache } from './response-cache.ts';

/** Where the API lives; /healthz, /readyz and /docs are outside it. */
export const API_PREFIX = '/api/company/v1';

/** What every route module and plugin gets: the read database, the key check and settings. */
export interface ApiDeps {
  config: ServerConfig;
  db: Db;
  /** The primary when `db` is a read replica (DATABASE_READ_URL), else null. */
  primaryDb: Db | null;
  /** Companies' data versions, kept while the database says when they change. */
  dataVersions: DataVersions;
  /** Values derived from companies' data, cached for list queries. */
  listCaches: ListCaches;
  /** Null when RESPONSE_CACHE_MB is 0. */
  responses: ResponseCache | null;
  receipts: ReceiptStore;
  authenticator: Authenticator;
  admission: Admission;
  /** SQLite's reader threads, when the reads run on them. */
  readers: SqliteReaders | null;
}

/** What this request's list queries read from: the read database and the shared caches. */
export const listSource = (deps: ApiDeps, request: FastifyRequest): ListSource =>
  listSourceOf(deps, () => request.dataVersion());

/** What list queries read from, at the company's data version `version` gives. */
export function listSourceOf(deps: ApiDeps, version: () => Promise<number>): ListSource {
  const { readers } = deps;
  return {
    db: deps.db,
    ...deps.listCaches,
    version,
    ...(readers
      ? { chain: (query, chain) => readers.query(query.sql, query.parameters, chain) }
      : {}),
  };
}

/**
 * A host and an optional port, as URLs carry them (RFC 3986's authority without user info):
 * an IPv6 literal in brackets, or a name of dot-separated labels (letters, digits, `-` but not
 * at either end, and `_`, which container and internal names use), with an optional trailing
 * dot. The port has no leading zero, and may be empty (`localhost:`, RFC 3986 §3.2.3: the
 * scheme's default); `validAuthority` checks the rest.
 */
const AUTHORITY =
  /^(?:\[([0-9A-Fa-f:.]+)\]|((?:[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.)*[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.?))(?::([1-9]\d{0,4})?)?$/;

/**
 * Whether the text is a host a URL can name (`AUTHORITY`): an IPv6 literal that is one, a name
 * of at most 253 characters whose last label, when a number (digits, or `0x` and hex digits),
 * makes it an IPv4 address in dotted decimal (a URL reads `1.2.3.4.5` and `999.1.1.1` as
 * addresses and refuses them, and `0x10` as the address 0.0.0.16, another host than the text
 * names), and a port of at most 65535 (0 names no port a client can reach: URLs built on it
 * lead nowhere). Whatever passes, the URL parser takes (`requestHost` spells it with that).
 */
function validAuthority(text: string): boolean {
  const match = AUTHORITY.exec(text);
  if (match === null) return false;
  const [, ipv6, name, port] = match;
  if (port !== undefined && Number(port) > 65_535) return false;
  if (ipv6 !== undefined) return isIPv6(ipv6);
  const host = (name as string).replace(/\.$/, '');
  if (host.length > 253) return false;
  return !/(?:^|\.)(?:\d+|0x[0-9a-f]*)$/i.test(host) || isIPv4(host);
}

/**
 * A request-target in absolute form (`GET http://host:port/path`): its authority, then its path
 * (empty for none, which is `/`).
 */
export const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)([^?#]*)/;

/**
 * The authority of a request-target in absolute form, which RFC 9112 §3.2.2 puts before `Host`,
 * or null: for an origin-form target, and behind a trusted proxy that names the public host
 * (`X-Forwarded-Host`), which comes first.
 */
function targetHost(request: FastifyRequest): string | null {
  if (request.ips !== undefined && request.headers['x-forwarded-host'] !== undefined) return null;
  return ABSOLUTE_FORM.exec(request.raw.url ?? '')?.[1] ?? null;
}

/** The scheme the client used, in its canonical lower case. */
const schemeOf = (request: FastifyRequest): string => request.protocol.toLowerCase();

/**
 * The host (and port) the client reached (see `targetHost`; else `request.host`), as the URL
 * parser spells it (RFC 3986 §6.2.2–6.2.3, as `PUBLIC_BASE_URL` is read): in lower case
 * (`B.Test` is `b.test`), an IPv6 address in its shortest form (`[0:0:0:0:0:0:0:1]` is
 * `[::1]`), without an empty port or the scheme's default one (`b.test:80` over http is
 * `b.test`). The URLs built on it, and the response cache's key, are then the same for every
 * spelling of one host. `hostProblem` has refused every host the parser would not take.
 */
function requestHost(request: FastifyRequest): string {
  const host = targetHost(request) ?? request.host;
  return host === '' ? '' : new URL(`${schemeOf(request)}://${host}`).host;
}

/**
 * The 400 for a request from which this API's absolute URLs cannot be built (RFC 9112 asks a
 * 400 for an invalid Host), or null. The host and scheme are those of `Host` (`X-Forwarded-Host`
 * and `X-Forwarded-Proto` behind a trusted proxy, the target's own host for a request-target in
 * absolute form); an empty host (HTTP/1.0) is the listener's. Also a request that is not
 * HTTP/1.0 or 1.1, or whose target holds a `#`.
 */
export function hostProblem(request: FastifyRequest): ApiError | null {
  // Node's parser takes a request line without a version (HTTP/0.9, which has no headers) and
  // HTTP/2.0, which an HTTP/1 listener does not speak: neither is a request this service reads.
  if (request.raw.httpVersionMajor !== 1) return unusableHost('version');
  const problem = targetProblem(request.raw.url ?? '');
  if (problem) return problem;
  const target = targetHost(request);
  const host = target ?? request.host;
  if (host === '') {
    // HTTP/1.1 requires Host (RFC 9112 §3.2); HTTP/1.0 predates it.
    return request.raw.httpVersion === '1.0' ? null : unusableHost('missing');
  }
  // Node keeps the first of several Host lines; RFC 9112 §3.2 asks a 400 for them (a proxy in
  // front may have read another one than the service would).
  if (headerLines(request.raw.rawHeaders, 'host') > 1) return unusableHost('several');
  if (!validAuthority(host)) return unusableHost(target === null ? 'host' : 'target');
  // Schemes are case-insensitive (RFC 3986 §3.1): a proxy's `X-Forwarded-Proto: HTTPS` is https.
  const scheme = schemeOf(request);
  if (scheme !== 'http' && scheme !== 'https') return unusableHost('scheme');
  return null;
}

/**
 * The 400 of a request-target no method may have, or null: RFC 9112 §3.2 has no fragment in
 * one (Node's parser passes a `#`, and the router cuts the path at it while a query keeps it: a
 * proxy in front may read another URL), and an http(s) URI with an empty host is invalid
 * (RFC 9110 §4.2.1: `GET http:///me`).
 */
export function targetProblem(target: string): ApiError | null {
  if (target.includes('#')) return unusableHost('fragment');
  if (ABSOLUTE_FORM.exec(target)?.[1] === '') return unusableHost('target');
  return null;
}

/** The absolute base of this API as the client reached it (or as PUBLIC_BASE_URL says). */
export function apiBaseUrl(config: ServerConfig, request: FastifyRequest): string {
  if (config.publicBaseUrl) return config.publicBaseUrl;
  const { localAddress, localPort } = request.socket;
  const listener = localAddress?.includes(':') ? `[${localAddress}]` : localAddress;
  return `${schemeOf(request)}://${requestHost(request) || `${listener}:${localPort}`}${API_PREFIX}`;
}

/** The receipt operation's URLs that expenses carry, on this API's base. */
export function receiptUrls(config: ServerConfig, request: FastifyRequest): ReceiptUrls {
  const base = apiBaseUrl(config, request);
  return {
    receiptUrl: (id, variant) =>
      `${base}/expenses/${id}/receipt${variant ? `?variant=${variant}` : ''}`,
  };
}
