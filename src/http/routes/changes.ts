import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import {
  decodeCursor,
  FEED_RESOURCES,
  type FeedCursor,
  type FeedResource,
  readChanges,
} from '../../db/changes.queries.ts';
import type { Db } from '../../db/database.ts';
import type { Scope } from '../../keys/scopes.ts';
import { ChangesPageSchema, ChangesQuery, DEFAULT_CHANGES_LIMIT } from '../../schemas/changes.ts';
import { type ApiDeps, receiptUrls } from '../deps.ts';
import { cursorExpired, insufficientScope, validationFailed } from '../errors.ts';
import { RATE_LIMIT_HEADERS } from '../openapi/headers.ts';
import { jsonResponse, operation, problemResponse } from '../openapi/operation.ts';
import { splitList, valueList } from '../params.ts';
import { feedPageSerializer } from '../serializers.ts';

/** The scope each resource of the feed needs; employees need none. */
const SCOPE_OF: Record<FeedResource, Scope | null> = {
  employee: null,
  leave_type: 'leaves.read',
  leave: 'leaves.read',
  expense_category: 'expenses.read',
  expense: 'expenses.read',
};

/**
 * The ranks of the feed's resources a key with `scopes` reads: those `named` (all when none is
 * named) that it may read. A named one it may not read was refused before validation
 * (`refuseUnreadableResources`); the ranks stay within the readable ones all the same.
 */
function readableRanks(scopes: readonly string[], named: FeedResource[] | undefined): number[] {
  return FEED_RESOURCES.flatMap(({ name }, rank) => {
    const scope = SCOPE_OF[name];
    const readable = scope === null || scopes.includes(scope);
    return readable && (named === undefined || named.includes(name)) ? [rank] : [];
  });
}

/** `after` as a position in `companyId`'s feed; a 422 for one this operation did not give it. */
function cursorOf(after: string | undefined, companyId: number): FeedCursor | undefined {
  if (after === undefined) return undefined;
  const decoded = decodeCursor(after);
  // A cursor of another company's feed is not a position in this one.
  if (!decoded || (decoded.companyId ?? companyId) !== companyId) {
    throw validationFailed([
      {
        parameter: 'after',
        message: 'must be a cursor from an earlier answer of this operation for this company',
      },
    ]);
  }
  return decoded;
}

/**
 * docs/api.md ("Authentication, in this order") puts a missing scope (403) before a bad parameter
 * (422): `resources` naming a resource the key may not read is refused from the query's raw text,
 * before the query is validated (`?resources=expense&limit=0` is a 403 for a key without
 * `expenses.read`).
 */
async function refuseUnreadableResources(request: FastifyRequest): Promise<void> {
  const raw = (request.query as Record<string, unknown>).resources;
  for (const list of Array.isArray(raw) ? raw : [raw]) {
    if (typeof list !== 'string') continue;
    for (const name of splitList(list)) {
      const scope = Object.hasOwn(SCOPE_OF, name) ? SCOPE_OF[name as FeedResource] : null;
      if (scope && !request.auth.scopes.includes(scope)) throw insufficientScope(scope);
    }
  }
}

// Fastify types a serializer as giving a string; it sends a Buffer it is given as it is.
const writeFeedPage = feedPageSerializer() as unknown as (data: unknown) => string;

export const changeRoutes: FastifyPluginAsyncTypebox<{ deps: ApiDeps }> = async (app, { deps }) => {
  app.get(
    '/changes',
    {
      ...operation({
        operationId: 'listChanges',
        // Not kept by the response cache: without `resources` the answer depends on the key's
        // scopes, which the cache's key does not hold.
        summary: 'Follow changes',
        description:
          'A full and an incremental sync in one operation: every record of the company at its latest change, deletions included, in commit order. Read from the beginning until `has_more` is false, store `next_cursor`, and poll with it as `after`. Leave types and categories that became inactive appear as `delete`. Without `resources`, the entries the key may not read are left out; naming such a resource is a 403.',
        tag: 'Changes',
        scope: null,
        scopedParameters: '`resources` names a resource the key may not read',
        querystring: ChangesQuery,
        success: {
          200: jsonResponse('A page of the change feed.', ChangesPageSchema),
          410: problemResponse(
            'The cursor is from before a deletion, of a resource it reads, that the feed forgot since the cursor was given (`CHANGES_RETENTION_DAYS`), or from an import the feed does not hold (its data restored from a copy older than the cursor): read the feed again from the beginning.',
            [cursorExpired().toProblem()],
            RATE_LIMIT_HEADERS,
          ),
        },
      }),
      // Each entry by its resource's schema; the problems as they are.
      serializerCompiler: ({ httpStatus }) =>
        httpStatus === '200' ? writeFeedPage : (data: unknown) => JSON.stringify(data),
      preValidation: refuseUnreadableResources,
    },
    async (request) => {
      const { query, auth } = request;
      const ranks = readableRanks(auth.scopes, valueList<FeedResource>(query.resources));
      const cursor = cursorOf(query.after, auth.company.id);
      const read = (db: Db) =>
        readChanges(
          db,
          auth.company.id,
          {
            cursor,
            sent: query.after,
            limit: query.limit ?? DEFAULT_CHANGES_LIMIT,
            ranks,
          },
          receiptUrls(deps.config, request),
        );
      let page = await read(deps.db);
      // A cursor ahead of the replica is one another replica gave (several behind a pooler,
      // or a failover): the primary is as far as any of them. Only a feed restored from an
      // older copy is behind the cursor there too.
      if ('lost' in page && page.lost === 'ahead' && deps.primaryDb) {
        page = await read(deps.primaryDb);
      }
      if ('lost' in page) throw cursorExpired(page.lost);
      return page;
    },
  );
};
