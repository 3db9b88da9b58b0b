import type { FastifyInstance, RouteHandlerMethod } from 'fastify';
import fp from 'fastify-plugin';
import type { DataVersions } from '../../db/data-versions.ts';
import { readCounted } from '../../db/statement-ledger.ts';
import { dataKeptChanging } from '../errors.ts';

/** How many times an answer is read before the request gives up with a 503. */
const READS = 3;

/**
 * Every answer of a data operation (a route marked `cacheable`) is read within one data version
 * of its company: a list page reads its version, its total and its rows in several statements
 * (on reader threads or pool connections of their own), and an import that committed between
 * them gave a page of the new rows under the old total and positions, a state that never was
 * (rows skipped or missing for a client paging through). The version is read again from the
 * database once the answer is made; where an import moved it meanwhile, the answer is read
 * again at the new version (and not kept by the response cache), at most READS times, then
 * refused with a 503 and `Retry-After`.
 *
 * On PostgreSQL a page's last statement, the one that reads its rows, reads the version too,
 * in its own snapshot: where no statement of the answer came after it or ran beside it, that is
 * the version the answer was made at, and no statement more is sent (statement-ledger.ts).
 *
 * The same version before and after means no import of the company committed in between, so
 * every statement read the same data: an import moves its companies' versions in its own
 * transaction, and a value cached under a version by a read that an import overtook is only
 * ever used by reads that see the version move too. An answer read in one statement (a record,
 * the reference lists: `oneStatement`) sees one state by itself and is not checked: the check is
 * a statement more, which on PostgreSQL cost the cheapest requests a fifth of their throughput.
 */
export const readWithinOneVersion = fp<{ versions: DataVersions }>(
  async (app, { versions }) => {
    app.addHook('onRoute', (route) => {
      const config = route.config as { cacheable?: boolean; oneStatement?: boolean } | undefined;
      if (!config?.cacheable || config.oneStatement) return;
      const read = route.handler as RouteHandlerMethod;
      route.handler = async function readUntilOneVersion(this: FastifyInstance, request, reply) {
        for (let attempt = 1; ; attempt++) {
          const version = await request.dataVersion();
          const companyId = request.auth.company.id;
          const { result: answer, versionRead } = await readCounted(async () =>
            read.call(this, request, reply),
          );
          if (versionRead !== undefined) versions.seen(companyId, versionRead);
          const now = versionRead ?? (await versions.readNow(companyId));
          if (now === version) return answer;
          request.log.info({ version, now, attempt }, 'data changed while the answer was read');
          if (attempt === READS) throw dataKeptChanging();
          // The response cache's key names the version the answer was first read at.
          request.responseCacheKey = undefined;
          request.useDataVersion(now);
        }
      };
    });
  },
  { name: 'read-within-one-version', dependencies: ['authentication'] },
);
