import type { Readable } from 'node:stream';
import { Type } from 'typebox';
import { importRecords } from '../../import/importer.ts';
import { parseNdjson } from '../../import/ndjson.ts';
import { ImportSummarySchema } from '../../schemas/admin.ts';
import { ref } from '../../schemas/common.ts';
import { countedImport } from '../../services/import.service.ts';
import { audit } from '../audit.ts';
import { countClientWaitsOnly } from '../body-timeout.ts';
import type { AdminDeps, AdminRoutes } from '../deps.ts';
import { ndjsonExpected } from '../errors.ts';
import { adminOperation, dataOf } from '../operation.ts';

export const NDJSON_TYPES = ['application/x-ndjson', 'application/ndjson'];

const NDJSON_BODY = Type.String({
  description:
    'NDJSON: one JSON object a line, its `type` saying which record (`company`, `employee`, `leave_type`, `leave`, `expense_category`, `expense`, or `delete`), as for `cdapi import FILE`.',
  examples: [
    '{"type":"company","id":9000000001,"name":"Acme","timezone":"Europe/Istanbul","active":true}\n' +
      '{"type":"expense_category","company_id":9000000001,"id":9000000001,"name":"Travel","description":null,"requires_receipt":true,"max_amount":"5000.00","active":true}\n',
  ],
});

/**
 * `POST /admin/import`: the body is an NDJSON file, read as it arrives and fed to the same
 * importer as `cdapi import` (one transaction, all or nothing). A body has no folder, so its
 * receipt paths lead nowhere: `importDir` is an empty folder of the listener's own, and a
 * record that names a receipt image fails like a missing file.
 */
export const importRoutes: AdminRoutes<
  AdminDeps & { importDir: string; changesRetentionDays: number }
> = async (app, { deps }) => {
  // NDJSON only, handed to the route unread, as a stream; any other type is answered 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(NDJSON_TYPES, (_request, payload, done) => done(null, payload));
  app.post(
    '/admin/import',
    {
      // The document shows the NDJSON body the route reads as a stream (a body schema would
      // have Fastify validate it).
      config: {
        swaggerTransform: ({ schema, url }) => ({ schema: { ...schema, body: NDJSON_BODY }, url }),
      },
      schema: adminOperation({
        operationId: 'importRecords',
        summary: 'Import NDJSON records',
        description:
          'Imports an NDJSON body in one transaction, all or nothing, exactly as `cdapi import FILE` does (companies are created and updated this way; delete lines remove records). The body is read as it arrives, and may come compressed (`Content-Encoding: gzip`, `deflate` or `br`). On the first bad line nothing is imported and the answer is 422 `import_failed`, naming the line and field. Receipt images cannot come by HTTP: a record naming one fails.',
        tag: 'Companies',
        success: [200, 'What was imported.', dataOf(ref(ImportSummarySchema))],
        errors: [400, 415, 422],
        extra: {
          consumes: NDJSON_TYPES,
        },
      }),
    },
    async (request) => {
      const body = request.body as Readable | undefined;
      if (!body) throw ndjsonExpected();
      // Read as fast as the import takes it: its client is charged only for keeping it waiting.
      countClientWaitsOnly(request.raw);
      const summary = await countedImport(
        deps.database,
        () =>
          importRecords(
            deps.database,
            deps.receipts,
            // Not destroyed when the import stops at a bad line: the listener reads the rest
            // and drops it (`drainUnreadBodies`), so the connection serves the next request.
            parseNdjson(body.iterator({ destroyOnReturn: false })),
            deps.importDir,
            // SQLite: the transaction, and the samples and the log's emptying after it, on
            // threads of their own, so neither a wait for the write lock or for readers nor a
            // statement holds the event loop, and every request with it.
            {
              changesRetentionDays: deps.changesRetentionDays,
              writerThread: true,
              afterCommitOnThreads: true,
            },
          ),
        (error) => request.log.warn({ err: error }, 'import not counted for the metrics'),
      );
      audit(request.log, request.adminActor, 'import', {
        companyIds: summary.company_ids,
        records: summary.records,
        counts: summary.counts,
        deletes: summary.deletes,
        absentDeletes: summary.absent_deletes,
      });
      for (const step of summary.unfinished_steps) {
        request.log.warn(`the import's records are committed, but ${step}`);
      }
      return { data: summary };
    },
  );
};
