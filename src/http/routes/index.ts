import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ApiDeps } from '../deps.ts';
import { changeRoutes } from './changes.ts';
import { employeeRoutes } from './employees.ts';
import { expenseRoutes } from './expenses.ts';
import { leaveRoutes } from './leaves.ts';
import { meRoutes } from './me.ts';
import { openapiRoutes } from './openapi.ts';
import { receiptRoutes } from './receipts.ts';
import { referenceRoutes } from './reference.ts';

/**
 * The API's routes, in the order the API description lists their paths. Each module is a
 * plugin that takes `{ deps }` (see deps.ts); `api.ts` registers them under API_PREFIX.
 */
export const API_ROUTES: ReadonlyArray<FastifyPluginAsyncTypebox<{ deps: ApiDeps }>> = [
  meRoutes,
  employeeRoutes,
  leaveRoutes,
  expenseRoutes,
  receiptRoutes,
  referenceRoutes,
  changeRoutes,
  openapiRoutes,
];
