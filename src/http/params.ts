import { isUtf8 } from 'node:buffer';
import type { FastifyRequest } from 'fastify';
import type { PageRequest, SortOrder } from '../db/list-source.ts';
import { DEFAULT_PER_PAGE, QUERY_ID, UPDATED_SINCE_FORMAT } from '../schemas/common.ts';
import type { ParameterError } from '../schemas/problems.ts';
import {
  formatTimestamp,
  hasFraction,
  hasTimestampSyntax,
  inStoredYears,
  normalizeTimestamp,
} from '../time.ts';
import { validationFailed } from './errors.ts';

/**
 * Turns validated query strings into the typed filters the query modules take: the schemas
 * (src/schemas/common.ts) have refused every malformed value by then, so the converters below
 * only convert. `queryValueErrors` and `rejectBadQueryValues` are the checks no single
 * parameter's schema can make (bytes that are not UTF-8, `from` after `to`, …), run before them.
 */

/** How every integer in a query or path is written: decimal digits and nothing else. */
export const PLAIN_DIGITS = /^[0-9]+$/;

/**
 * The integer `text` writes in its one spelling (decimal digits, no leading zero, at most
 * 2^53 − 1), else NaN (which no signature or id matches): a signed part is the text that was
 * signed, so `0900001` or `01796104551` is an altered part, not the same number.
 */
export const canonicalInteger = (text: string | undefined): number =>
  text !== undefined && /^(0|[1-9][0-9]*)$/.test(text) && Number.isSafeInteger(Number(text))
    ? Number(text)
    : Number.NaN;

export const splitList = (value: string): string[] => value.split(',').map((part) => part.trim());

export const idList = (value: string | undefined): number[] | undefined =>
  value === undefined ? undefined : [...new Set(splitList(value).map(Number))];

export const valueList = <T extends string>(value: string | undefined): T[] | undefined =>
  value === undefined ? undefined : ([...new Set(splitList(value))] as T[]);

/** An empty search means no search. */
export const searchText = (value: string | undefined): string | undefined =>
  value === undefined || value.trim() === '' ? undefined : value.trim();

export function sortOrder<F extends string>(value: string | undefined): SortOrder<F> {
  if (value === undefined) return { field: 'id' as F, direction: 'asc' };
  return value.startsWith('-')
    ? { field: value.slice(1) as F, direction: 'desc' }
    : { field: value as F, direction: 'asc' };
}

export const pageRequest = (query: { page?: number; per_page?: number }): PageRequest => ({
  page: query.page ?? 1,
  perPage: query.per_page ?? DEFAULT_PER_PAGE,
});

/** The query of a record list (leaves, expenses): the parameters both take. */
interface RecordListQuery {
  status?: string;
  employee_id?: string;
  from?: string;
  to?: string;
  search?: string;
  updated_since?: string;
}

/** The filters every record list takes, typed for its query function. */
export const recordListFilters = <S extends string>(query: RecordListQuery) => ({
  status: valueList<S>(query.status),
  employeeIds: idList(query.employee_id),
  from: query.from,
  to: query.to,
  search: searchText(query.search),
  updatedSince: utcTimestamp(query.updated_since),
});

const PLAIN_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A run of percent-encoded bytes (`%C3%A9`). */
const ENCODED_BYTES = /(?:%[0-9A-Fa-f]{2})+/g;

/** Whether every run of percent-encoded bytes in `text` is UTF-8. */
function encodesUtf8(text: string): boolean {
  for (const [run] of text.matchAll(ENCODED_BYTES)) {
    if (!isUtf8(Buffer.from(run.replaceAll('%', ''), 'hex'))) return false;
  }
  return true;
}

function decodedName(name: string): string | undefined {
  try {
    return decodeURIComponent(name.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}

/**
 * The parameters of a request's query string whose percent-encoded bytes are not UTF-8
 * (`search=caf%C3`, a cut-off `é`; `search=%FF`): the query-string parser keeps such a value
 * as it was sent, so it would be read as the text `caf%C3`. A `%` that starts no escape
 * (`100%`) stays a literal character, as in a browser's URL parsing.
 */
function undecodableParameters(url: string): string[] {
  const start = url.indexOf('?');
  if (start < 0 || !url.includes('%', start)) return [];
  const names: string[] = [];
  for (const pair of url.slice(start + 1).split('&')) {
    const equals = pair.indexOf('=');
    if (equals < 0 || encodesUtf8(pair.slice(equals + 1))) continue;
    const name = decodedName(pair.slice(0, equals));
    if (name !== undefined && !names.includes(name)) names.push(name);
  }
  return names;
}

/** The query parameters that take a list of ids (`IdListParam`). */
const ID_LIST_PARAMETERS = ['employee_id', 'leave_type_id', 'category_id'];

const ONE_QUERY_ID = new RegExp(`^${QUERY_ID}$`);

/**
 * Whether a list of ids as the schema takes them (up to 16 digits each) holds one above 2^53 − 1,
 * the largest id a record can have, which JavaScript would round to another id.
 */
const holdsIdPastSafe = (value: string): boolean => {
  const ids = value.split(',');
  return (
    ids.every((id) => ONE_QUERY_ID.test(id)) && ids.some((id) => !Number.isSafeInteger(Number(id)))
  );
};

/**
 * Errors no single parameter's schema can see: a value whose percent-encoded bytes are not
 * UTF-8 (see `undecodableParameters`), an id above 2^53 − 1 in a list of ids (see
 * `holdsIdPastSafe`), `from` after `to` (a range no record can be in) and an
 * `updated_since` that is RFC 3339 but outside the years 0001–9999 in UTC (the stored range).
 * All are 422s rather than a silent empty or unfiltered page, or a search for other text. Also
 * called by the error handler, so they are named alongside other bad parameters.
 */
export function queryValueErrors(request: { query: unknown; url: string }): ParameterError[] {
  const query = (request.query ?? {}) as Record<string, unknown>;
  const { from, to, updated_since } = query;
  const errors: ParameterError[] = undecodableParameters(request.url).map((parameter) => ({
    parameter,
    message: 'must be UTF-8 text: its percent-encoded bytes are not UTF-8',
  }));
  for (const parameter of ID_LIST_PARAMETERS) {
    const value = query[parameter];
    if (typeof value === 'string' && holdsIdPastSafe(value)) {
      errors.push({ parameter, message: `must hold ids of at most ${Number.MAX_SAFE_INTEGER}` });
    }
  }
  if (
    typeof from === 'string' &&
    typeof to === 'string' &&
    PLAIN_DATE.test(from) &&
    PLAIN_DATE.test(to) &&
    from > to
  ) {
    errors.push(
      { parameter: 'from', message: 'must not be after to' },
      { parameter: 'to', message: 'must not be before from' },
    );
  }
  if (typeof updated_since === 'string' && utcTimestamp(updated_since) === undefined) {
    // The schema's date-time format also takes an offset without its colon (`+0530`), which
    // RFC 3339 does not.
    errors.push({
      parameter: 'updated_since',
      message: !hasTimestampSyntax(updated_since)
        ? updatedSinceFormatMessage(updated_since)
        : 'must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z',
    });
  }
  return errors;
}

/**
 * What is wrong with an `updated_since` that is no RFC 3339 timestamp. A `+` left unencoded in
 * a query reads as a space (`…T03:00:00 03:00`): the message says so, as the value the client
 * wrote has the offset it asks for. So does a second 60 at another minute than a leap second's.
 */
export function updatedSinceFormatMessage(value: unknown): string {
  if (typeof value !== 'string') return UPDATED_SINCE_FORMAT;
  // The schema's format takes second 60 where a leap second can be, 23:59:60 in UTC, alone.
  if (hasTimestampSyntax(value) && /:60(\.\d+)?([Zz]|[+-]\d\d:\d\d)$/.test(value))
    return `${UPDATED_SINCE_FORMAT} (second 60 is a leap second, which only 23:59:60 in UTC can be)`;
  const plusAsSpace = /\d \d\d:\d\d$/.test(value);
  return plusAsSpace && hasTimestampSyntax(value.replace(/ (?=\d\d:\d\d$)/, '+'))
    ? `${UPDATED_SINCE_FORMAT} (a + in a URL's query reads as a space: write it %2B)`
    : UPDATED_SINCE_FORMAT;
}

export async function rejectBadQueryValues(request: FastifyRequest): Promise<void> {
  // Only parameters the route declares: any other is ignored, whatever its value.
  const declared =
    (request.routeOptions.schema?.querystring as { properties?: object } | undefined)?.properties ??
    {};
  const errors = queryValueErrors(request).filter((e) => e.parameter in declared);
  if (errors.length > 0) throw validationFailed(errors);
}

/**
 * `updated_since` as stored timestamps are written: UTC, whole seconds (a leap second is the
 * next one); undefined when the instant falls outside the years 0001–9999. Stored timestamps
 * are whole seconds, so `updated_at >= 09:00:00.2` is `updated_at >= 09:00:01`: a fraction
 * rounds up (but for the last second of 9999, which no later stored second follows).
 */
export function utcTimestamp(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const instant = normalizeTimestamp(value);
  if (instant === null) return undefined;
  if (!hasFraction(value)) return instant;
  const next = formatTimestamp(new Date(Date.parse(instant) + 1000));
  return inStoredYears(next) ? next : instant;
}
