export type { Client, ClientOptions, FollowOptions, ListResource } from './client.ts';
export { createClient } from './client.ts';
export type { ParameterError } from './errors.ts';
export { ApiError, ReceiptError } from './errors.ts';
export type { RateLimitWindow } from './rate-limit.ts';
export { parseRateLimit } from './rate-limit.ts';
export type { CallOptions, Wait } from './transport.ts';
export type * from './types.ts';
