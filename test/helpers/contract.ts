import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/**
 * Checks a response against the OpenAPI 3.1 document the app serves: the operation must
 * declare the status, the Content-Type, the body's schema and the required headers. Paths the
 * document does not describe (health checks, /docs, unknown paths) are not checked.
 */

/** The parts of an OpenAPI 3.1 document the checker reads; everything else is ignored. */
export interface OpenApiDocument {
  servers?: { url: string }[];
  paths?: Record<string, Record<string, unknown>>;
  components?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface CheckedResponse {
  method: string;
  /** The request path, with or without the server prefix and query string. */
  path: string;
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  /** The body as received: a Buffer is decompressed when Content-Encoding says so. */
  body?: string | Buffer;
  /** Defaults to the Content-Type header. */
  contentType?: string;
}

export interface ContractChecker {
  /** What does not conform, one line each; empty when the response conforms (or is skipped). */
  check(response: CheckedResponse): string[];
}

type Json = Record<string, unknown>;
type Validator = ((data: unknown) => boolean) & {
  errors?: { instancePath: string; message?: string; params?: unknown }[] | null;
};

/** The base URI the document is registered under, so `#/components/...` refs resolve in it. */
const DOCUMENT_ID = 'https://contract.invalid/openapi.json';
const MAX_ERRORS = 5;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const escapePointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
const pointerOf = (segments: string[]) =>
  `#/${segments.map((s) => encodeURIComponent(escapePointer(s))).join('/')}`;

/** A copy without `$id`/`$schema`: ids would move the base URI that `#/...` refs resolve on. */
function withoutIds(value: unknown, ids: Map<string, string[]>, at: string[] = []): unknown {
  if (Array.isArray(value)) return value.map((item, i) => withoutIds(item, ids, [...at, `${i}`]));
  if (!isObject(value)) return value;
  const copy: Json = {};
  for (const [key, item] of Object.entries(value)) {
    if (key === '$schema') continue;
    if (key === '$id' && typeof item === 'string') {
      ids.set(item, at);
      continue;
    }
    copy[key] = withoutIds(item, ids, [...at, key]);
  }
  return copy;
}

/** Splits `/leaves/{id}` into matchers; literal segments rank before parameters. */
interface Template {
  path: string;
  segments: (string | RegExp)[];
}

function compileTemplate(path: string): Template {
  const segments = path
    .split('/')
    .slice(1)
    .map((segment) => {
      if (!segment.includes('{')) return segment;
      const source = segment
        .split(/(\{[^}]+\})/)
        .map((part) =>
          part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
        )
        .join('');
      return new RegExp(`^${source}$`);
    });
  return { path, segments };
}

/** Negative when `a` is more specific: the first segment where one is literal decides. */
function bySpecificity(a: Template, b: Template): number {
  for (let i = 0; i < a.segments.length; i++) {
    const literalA = typeof a.segments[i] === 'string';
    const literalB = typeof b.segments[i] === 'string';
    if (literalA !== literalB) return literalA ? -1 : 1;
  }
  return 0;
}

function matches(template: Template, segments: string[]): boolean {
  return (
    template.segments.length === segments.length &&
    template.segments.every((expected, i) => {
      const actual = segments[i] as string;
      return typeof expected === 'string' ? expected === actual : expected.test(actual);
    })
  );
}

function basePathOf(document: OpenApiDocument): string {
  const url = document.servers?.[0]?.url ?? '';
  const path = new URL(url, 'http://base.invalid').pathname;
  return path === '/' ? '' : path.replace(/\/$/, '');
}

function headerValue(headers: CheckedResponse['headers'], name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue;
    return Array.isArray(value) ? value.join(', ') : String(value);
  }
  return undefined;
}

const mediaTypeOf = (contentType: string) => (contentType.split(';')[0] ?? '').trim().toLowerCase();
const isJson = (mediaType: string) =>
  mediaType === 'application/json' || mediaType.endsWith('+json');

/** The declared media type a Content-Type falls under: exact, then `type/*`, then `*\/*`. */
function declaredMediaType(declared: string[], mediaType: string): string | undefined {
  const lower = new Map(declared.map((d) => [mediaTypeOf(d), d]));
  const [type] = mediaType.split('/');
  return lower.get(mediaType) ?? lower.get(`${type}/*`) ?? lower.get('*/*');
}

function decodedBody(body: string | Buffer | undefined, encoding: string | undefined): string {
  if (body === undefined) return '';
  if (typeof body === 'string') return body;
  if (body.length === 0) return '';
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
      return gunzipSync(body).toString('utf8');
    case 'deflate':
      return inflateSync(body).toString('utf8');
    case 'br':
      return brotliDecompressSync(body).toString('utf8');
    default:
      return body.toString('utf8');
  }
}

const NUMERIC = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

/** A header is a string on the wire; it conforms when the string or its plain reading does. */
function headerCandidates(value: string): unknown[] {
  const candidates: unknown[] = [value];
  if (NUMERIC.test(value.trim())) candidates.push(Number(value.trim()));
  if (value === 'true' || value === 'false') candidates.push(value === 'true');
  return candidates;
}

function describeErrors(validate: Validator): string {
  const errors = validate.errors ?? [];
  const shown = errors
    .slice(0, MAX_ERRORS)
    .map(
      (error) =>
        `${error.instancePath || '(root)'} ${error.message ?? 'is invalid'} ${JSON.stringify(error.params)}`,
    );
  if (errors.length > MAX_ERRORS) shown.push(`…and ${errors.length - MAX_ERRORS} more`);
  return shown.join('; ');
}

/**
 * `methods`: those whose answers are checked. The API's document describes only GET (and HEAD
 * like it): any other method only meets the auto-routes' 405 method_not_allowed. The admin
 * API's also describes POST.
 */
export function createContractChecker(
  document: OpenApiDocument,
  methods: readonly string[] = ['GET', 'HEAD'],
): ContractChecker {
  const ids = new Map<string, string[]>();
  const doc = withoutIds(document, ids) as OpenApiDocument;
  // Not strict: OpenAPI's own keywords (`example`, `x-…`) are ignored. A format Ajv does not
  // know is still reported, as a warning, so a schema is never checked less than it says.
  const ajv = new Ajv2020.default({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema(doc as Json, DOCUMENT_ID);
  // A schema that had an `$id` stays reachable by it (`$ref: 'Employee'`).
  for (const [id, at] of ids) {
    const resolved = new URL(id, DOCUMENT_ID).href;
    if (resolved !== DOCUMENT_ID && !ajv.getSchema(resolved))
      ajv.addSchema({ $ref: `${DOCUMENT_ID}${pointerOf(at)}` }, resolved);
  }

  const basePath = basePathOf(document);
  const templates = Object.keys(doc.paths ?? {})
    .map(compileTemplate)
    .sort(bySpecificity);
  const validators = new Map<string, Validator>();

  const validatorAt = (segments: string[]): Validator => {
    const pointer = pointerOf(segments);
    let validate = validators.get(pointer);
    if (!validate) {
      validate = ajv.compile({ $ref: `${DOCUMENT_ID}${pointer}` }) as Validator;
      validators.set(pointer, validate);
    }
    return validate;
  };

  /** Follows local `$ref`s (responses, headers), keeping the pointer of where it ended. */
  const resolve = (value: unknown, at: string[]): { value: unknown; at: string[] } => {
    let current = value;
    let where = at;
    for (let hops = 0; isObject(current) && typeof current.$ref === 'string'; hops++) {
      const ref = current.$ref;
      if (!ref.startsWith('#/') || hops > 20) break;
      where = ref
        .slice(2)
        .split('/')
        .map((s) => decodeURIComponent(s).replace(/~1/g, '/').replace(/~0/g, '~'));
      current = where.reduce<unknown>((node, key) => (isObject(node) ? node[key] : undefined), doc);
    }
    return { value: current, at: where };
  };

  const findTemplate = (path: string): Template | undefined => {
    const segments = path.split('/').slice(1);
    return templates.find((template) => matches(template, segments));
  };

  return {
    check(response) {
      const method = response.method.toUpperCase();
      if (!methods.includes(method)) return [];
      const url = response.path.split(/[?#]/)[0] ?? '';
      // Served outside the API (health checks, /docs): not described relative to the server.
      if (basePath && url !== basePath && !url.startsWith(`${basePath}/`)) return [];
      const template = findTemplate(url.slice(basePath.length));
      if (!template) return [];

      const where = `${method} ${template.path}`;
      const pathItem = doc.paths?.[template.path] ?? {};
      // HEAD is answered like GET, unless the document describes it on its own.
      const operationName =
        method !== 'HEAD' ? method.toLowerCase() : isObject(pathItem.head) ? 'head' : 'get';
      const operation = pathItem[operationName];
      if (!isObject(operation)) return [`${where}: the document has no ${operationName} operation`];

      const responses = isObject(operation.responses) ? operation.responses : {};
      const status = String(response.status);
      const statusKey = [status, `${status[0]}XX`, `${status[0]}xx`, 'default'].find(
        (key) => responses[key] !== undefined,
      );
      if (!statusKey) {
        return [
          `${where}: status ${status} is not declared (declared: ${Object.keys(responses).join(', ') || 'none'})`,
        ];
      }
      const declared = resolve(responses[statusKey], [
        'paths',
        template.path,
        operationName,
        'responses',
        statusKey,
      ]);
      if (!isObject(declared.value)) return [`${where} ${status}: the response object is missing`];
      const responseObject = declared.value;
      const problems: string[] = [];
      const at = `${where} ${status}`;

      // ---- Content-Type and body ----
      const content = isObject(responseObject.content) ? responseObject.content : {};
      const declaredTypes = Object.keys(content);
      const contentTypeHeader =
        response.contentType ?? headerValue(response.headers, 'content-type');
      const encoding = headerValue(response.headers, 'content-encoding');
      let body: string;
      try {
        body = decodedBody(response.body, encoding);
      } catch (error) {
        return [`${at}: the body cannot be decoded as ${encoding}: ${(error as Error).message}`];
      }
      const hasBody = method !== 'HEAD' && body.length > 0;
      if (contentTypeHeader === undefined || contentTypeHeader === '') {
        if (hasBody) problems.push(`${at}: a body without a Content-Type`);
        else if (declaredTypes.length > 0 && method !== 'HEAD')
          problems.push(`${at}: empty body, but the document declares ${declaredTypes.join(', ')}`);
      } else if (declaredTypes.length === 0) {
        if (hasBody)
          problems.push(`${at}: a ${contentTypeHeader} body, but the document declares no content`);
      } else {
        const mediaType = mediaTypeOf(contentTypeHeader);
        const declaredType = declaredMediaType(declaredTypes, mediaType);
        if (!declaredType) {
          problems.push(
            `${at}: Content-Type ${mediaType} is not declared (declared: ${declaredTypes.join(', ')})`,
          );
        } else if (method !== 'HEAD' && isJson(mediaType)) {
          const mediaObject = content[declaredType];
          if (isObject(mediaObject) && mediaObject.schema !== undefined) {
            let parsed: unknown;
            let parses = true;
            try {
              parsed = JSON.parse(body);
            } catch {
              parses = false;
            }
            if (!parses) {
              problems.push(`${at}: the ${mediaType} body is not JSON: ${body.slice(0, 80)}`);
            } else {
              const validate = validatorAt([...declared.at, 'content', declaredType, 'schema']);
              if (!validate(parsed))
                problems.push(`${at}: body does not match the schema: ${describeErrors(validate)}`);
            }
          }
        }
      }

      // ---- Headers ----
      const headers = isObject(responseObject.headers) ? responseObject.headers : {};
      for (const [name, entry] of Object.entries(headers)) {
        if (name.toLowerCase() === 'content-type') continue; // OpenAPI ignores it.
        const header = resolve(entry, [...declared.at, 'headers', name]);
        if (!isObject(header.value)) {
          problems.push(`${at}: header ${name}: the header object is missing`);
          continue;
        }
        const value = headerValue(response.headers, name);
        if (value === undefined) {
          if (header.value.required === true) problems.push(`${at}: header ${name} is missing`);
          continue;
        }
        if (header.value.schema === undefined) continue;
        const validate = validatorAt([...header.at, 'schema']);
        if (!headerCandidates(value).some((candidate) => validate(candidate)))
          problems.push(
            `${at}: header ${name}: ${JSON.stringify(value)} does not match its schema: ${describeErrors(validate)}`,
          );
      }
      return problems;
    },
  };
}
