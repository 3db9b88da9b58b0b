import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { DatabaseHandle } from '../db/connect.ts';
import type { ReceiptStore } from '../receipts/store.ts';

/** What the admin routes share: the primary database (they write) and the receipt store. */
export interface AdminDeps {
  database: DatabaseHandle;
  receipts: ReceiptStore;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The label of the admin token the request carried (set by the auth hook). */
    adminActor: string;
  }
}

export type AdminRoutes<D = AdminDeps> = FastifyPluginAsyncTypebox<{ deps: D }>;
