/**
 * The response headers the API documents, once each. A route's response declares the headers
 * it carries with `headers(...)`; the document generator turns each into a `$ref` to
 * `components.headers` (see `referenceHeaders` in document.ts), so every header is explained
 * in one place. Several entries may describe the same HTTP header in different situations
 * (`Cache-Control` on data and on a receipt file).
 */

/** Marks a declared header with the component that describes it. */
export const HEADER_COMPONENT_KEYWORD = 'x-header-component';

interface HeaderComponent {
  /** The HTTP header name, as documented. */
  name: string;
  description: string;
  /** True only when every response that declares the header always carries it. */
  required: boolean;
  schema: Record<string, unknown>;
  example: unknown;
}

export const HEADER_COMPONENTS = {
  RequestId: {
    name: 'X-Request-Id',
    description:
      'Identifies the request in the service’s logs. The client’s own `X-Request-Id` is echoed when it is 1–128 characters of `A-Z a-z 0-9 . _ : -`; otherwise one is generated.',
    required: true,
    schema: { type: 'string', maxLength: 128 },
    example: '6f1c2a9e-3b7d-4e0a-9a51-2f8d4c1b7e30',
  },
  RateLimitPolicy: {
    name: 'RateLimit-Policy',
    description:
      'The key’s two rolling windows (draft-ietf-httpapi-ratelimit-headers-11): `q` requests accepted in any `w` seconds. On every answer to a request whose key was accepted.',
    required: false,
    schema: { type: 'string' },
    example: '"minute";q=120;w=60, "hour";q=3000;w=3600',
  },
  RateLimit: {
    name: 'RateLimit',
    description:
      'For each window: `r` requests remaining and `t` seconds until a slot frees. On every answer to a request whose key was accepted.',
    required: false,
    schema: { type: 'string' },
    example: '"minute";r=57;t=23, "hour";r=2940;t=1800',
  },
  XRateLimitLimit: {
    name: 'X-RateLimit-Limit',
    description: 'Legacy form, for the window that will refuse first: its limit.',
    required: false,
    schema: { type: 'integer', minimum: 0 },
    example: 120,
  },
  XRateLimitRemaining: {
    name: 'X-RateLimit-Remaining',
    description: 'Legacy form, for the window that will refuse first: requests remaining.',
    required: false,
    schema: { type: 'integer', minimum: 0 },
    example: 57,
  },
  XRateLimitReset: {
    name: 'X-RateLimit-Reset',
    description: 'Legacy form, for the window that will refuse first: seconds until a slot frees.',
    required: false,
    schema: { type: 'integer', minimum: 0 },
    example: 23,
  },
  RetryAfter: {
    name: 'Retry-After',
    description:
      'Whole seconds to wait. After a 429, a request sent that much later is accepted unless something else used the slot first.',
    required: true,
    schema: { type: 'integer', minimum: 1 },
    example: 23,
  },
  WwwAuthenticate: {
    name: 'WWW-Authenticate',
    description: 'The authentication scheme to use.',
    required: true,
    schema: { type: 'string' },
    example: 'Bearer',
  },
  WwwAuthenticateInsufficientScope: {
    name: 'WWW-Authenticate',
    description: 'With insufficient_scope only: the scope the operation needs (RFC 6750).',
    required: false,
    schema: { type: 'string' },
    example: 'Bearer error="insufficient_scope", scope="expenses.read"',
  },
  CacheControlNoStore: {
    name: 'Cache-Control',
    description: 'Company data and redirects to signed URLs are never stored by caches.',
    required: true,
    schema: { type: 'string', enum: ['no-store'] },
    example: 'no-store',
  },
  CacheControlReceiptFile: {
    name: 'Cache-Control',
    description: 'Private caching for as long as the signed URL stays valid.',
    required: true,
    schema: { type: 'string' },
    example: 'private, max-age=287',
  },
  ReceiptLocation: {
    name: 'Location',
    description:
      'A signed URL of the image, served without an API key and valid for a limited time (`SIGNED_URL_TTL_SECONDS`, 300 s by default).',
    required: true,
    schema: { type: 'string', format: 'uri' },
    example:
      'https://api.example.com/api/company/v1/receipt-files/42/processed?company=1&expires=1772438400&signature=1lWFAIFGFMj-G56p_W_XQO1EP-Lkbvoq1w8Q3DUSbbQ',
  },
  ETag: {
    name: 'ETag',
    description:
      'Identifies this answer; send it back in `If-None-Match` to get a 304 without a body while the answer would be the same.',
    required: true,
    schema: { type: 'string' },
    example: 'W/"kZbXzX3nq5GmJ8b0HkS1YpR2v1c"',
  },
  ReceiptETag: {
    name: 'ETag',
    description:
      'Identifies the image bytes: `"<SHA-256 of the original file, hex>-<variant>"` (the original variant hashes to it). Send it back in `If-None-Match` to get a 304.',
    required: true,
    schema: { type: 'string' },
    example: '"2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881-processed"',
  },
  ReceiptContentLength: {
    name: 'Content-Length',
    description: 'Size of the image in bytes.',
    required: true,
    schema: { type: 'integer', minimum: 0 },
    example: 184_311,
  },
  ReceiptContentDisposition: {
    name: 'Content-Disposition',
    description: 'Shown inline, with a file name for saving.',
    required: true,
    schema: { type: 'string' },
    example: 'inline; filename="receipt-42.jpg"',
  },
} satisfies Record<string, HeaderComponent>;

export type HeaderKey = keyof typeof HEADER_COMPONENTS;

/** The headers a response carries, as a route response schema declares them. */
export function headers(...keys: HeaderKey[]): Record<string, Record<string, unknown>> {
  const declared: Record<string, Record<string, unknown>> = {};
  for (const key of keys) {
    const { name, schema } = HEADER_COMPONENTS[key];
    declared[name] = { ...schema, [HEADER_COMPONENT_KEYWORD]: key };
  }
  return declared;
}

/** `components.headers` of the document, built from the table above. */
export function headerComponents(): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    Object.entries(HEADER_COMPONENTS).map(([key, { description, required, schema, example }]) => [
      key,
      { description, required, schema, example },
    ]),
  );
}

export const RATE_LIMIT_HEADERS: HeaderKey[] = [
  'RateLimitPolicy',
  'RateLimit',
  'XRateLimitLimit',
  'XRateLimitRemaining',
  'XRateLimitReset',
];
