import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { findLeave, listLeaves } from '../../db/leaves.queries.ts';
import type { LeaveStatus } from '../../domain.ts';
import { dataOf, IdPathParams, listOf } from '../../schemas/common.ts';
import { LeaveDetailSchema, LeaveListQuery, LeaveSchema } from '../../schemas/leaves.ts';
import { type ApiDeps, listSource } from '../deps.ts';
import { recordNotFound } from '../errors.ts';
import { jsonResponse, operation, RECORD_NOT_FOUND } from '../openapi/operation.ts';
import {
  idList,
  pageRequest,
  recordListFilters,
  rejectBadQueryValues,
  sortOrder,
} from '../params.ts';

export const leaveRoutes: FastifyPluginAsyncTypebox<{ deps: ApiDeps }> = async (app, { deps }) => {
  app.get(
    '/leaves',
    {
      ...operation({
        operationId: 'listLeaves',
        cacheable: true,
        summary: 'List leave requests',
        description:
          'Leave requests of the key’s company. With `from` and/or `to`, the leaves whose period intersects the range; `from` after `to` is a 422.',
        tag: 'Leaves',
        scope: 'leaves.read',
        querystring: LeaveListQuery,
        success: { 200: jsonResponse('A page of leave requests.', listOf(LeaveSchema)) },
      }),
      preHandler: rejectBadQueryValues,
    },
    async (request) => {
      const { query } = request;
      return listLeaves(
        listSource(deps, request),
        request.auth.company.id,
        { ...recordListFilters<LeaveStatus>(query), leaveTypeIds: idList(query.leave_type_id) },
        sortOrder(query.sort),
        pageRequest(query),
      );
    },
  );

  app.get(
    '/leaves/:id',
    operation({
      operationId: 'getLeave',
      cacheable: true,
      oneStatement: true,
      summary: 'Get a leave request',
      description:
        'One leave with its document obligation; attachments are reported by presence only and never returned.',
      tag: 'Leaves',
      scope: 'leaves.read',
      params: IdPathParams,
      success: { 200: jsonResponse('The leave request.', dataOf(LeaveDetailSchema)) },
      notFound: RECORD_NOT_FOUND,
    }),
    async (request) => {
      const leave = await findLeave(deps.db, request.auth.company.id, Number(request.params.id));
      if (!leave) throw recordNotFound();
      return { data: leave };
    },
  );
};
