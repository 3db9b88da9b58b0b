import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { Type } from 'typebox';
import type { FeedPage } from '../db/changes.queries.ts';
import {
  ChangeSchema,
  ChangesPageSchema,
  FEED_RECORD_SCHEMAS,
  FEED_RESOURCE_NAMES,
} from '../schemas/changes.ts';
import { ref, withoutId } from '../schemas/common.ts';
import { modelsById } from '../schemas/models.ts';
import { compiledOnce } from './compiled-once.ts';

type Schema = Record<string, unknown>;
/** The shared models by `$id`, as Fastify hands them to the serializer factory. */
type Models = Readonly<Record<string, unknown>>;

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A shared model as it is serialized, its `$id` dropped: for inlining where it is pointed at. */
function inlined(model: unknown, models: Models): Schema | undefined {
  if (!isSchema(model)) return undefined;
  return withoutId(nullableForSerializer(model, models) as Schema);
}

/**
 * What a field that may be null is serialized with: `anyOf: [X, {type: 'null'}]` (TypeBox's
 * `Type.Union([X, Type.Null()])`, as the OpenAPI document shows it) becomes X with
 * `nullable: true`, a model X points at inlined, so it has a `type`. fast-json-stringify then
 * writes `null` after one comparison; for an `anyOf` it runs an Ajv validation of the value per
 * field of every record (half of a 100-record page's serialization time) and compiles those
 * validators on the first answer that needs them (~65 ms of the event loop each, after every
 * start; docs/performance.md, item 70). The output is the same for every value the schema
 * allows. Other unions are left as they are.
 */
export function nullableForSerializer(schema: unknown, models: Models): unknown {
  if (Array.isArray(schema)) return schema.map((item) => nullableForSerializer(item, models));
  if (!isSchema(schema)) return schema;
  const copy: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    copy[key] = nullableForSerializer(value, models);
  }
  const { anyOf, ...siblings } = copy;
  if (!Array.isArray(anyOf) || anyOf.length !== 2) return copy;
  const nullAt = anyOf.findIndex(
    (branch) => isSchema(branch) && branch.type === 'null' && Object.keys(branch).length === 1,
  );
  if (nullAt === -1) return copy;
  const value = anyOf[1 - nullAt] as Schema;
  const other = typeof value.$ref === 'string' ? inlined(models[value.$ref], models) : value;
  // Ajv (fast-json-stringify validates the unions left with it) takes `nullable` only beside `type`.
  if (other === undefined || typeof other.type !== 'string') return copy;
  return { ...siblings, ...other, nullable: true };
}

/**
 * Fastify's serializer factory (fast-json-stringify) given every schema, the shared models and
 * each route's, as `nullableForSerializer` makes them. The schemas the OpenAPI document and
 * request validation read are not changed. (The change feed's pages are written by
 * `feedPageSerializer`.)
 */
export function buildSerializer(): ReturnType<typeof SerializerSelector> {
  const factory = SerializerSelector();
  return (externalSchemas, options) => {
    const models: Models = { ...(externalSchemas as Models | undefined) };
    const compile = factory(serializedModels(models), options);
    // ~250 ms of fast-json-stringify for an app's routes, once per process.
    const compileOnce = compiledOnce(JSON.stringify([models, options ?? null]), compile);
    return (route) =>
      compileOnce({ ...route, schema: nullableForSerializer(route.schema, models) });
  };
}

/** The shared models as they are serialized. */
export function serializedModels(models: Models): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(models).map(([id, model]) => [id, nullableForSerializer(model, models)]),
  );
}

/** Keeps of a value what a schema declares (`projectionOf`). */
type Projection = (value: unknown) => unknown;

const PRIMITIVE_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);

/**
 * What the serializer keeps of a value by `schema` (as `nullableForSerializer` makes it): an
 * object's declared properties, in their order, each by its own schema (a required one missing
 * is an error, as in fast-json-stringify); an array's items; null where the schema allows it; a
 * primitive as it is, and an object where a primitive is declared an error. What it supports of
 * JSON Schema is what the feed's models use: anything else (another union,
 * `additionalProperties`) is refused when it is built, so a model that outgrows it fails every
 * test rather than letting through what it does not declare. `path` names the value in errors.
 */
export function projectionOf(schema: unknown, models: Models, path: string): Projection {
  const unsupported = () =>
    new Error(`the feed's page writer does not support ${path}: ${JSON.stringify(schema)}`);
  if (!isSchema(schema)) throw unsupported();
  if (typeof schema.$ref === 'string') {
    return projectionOf(inlined(models[schema.$ref], models), models, path);
  }
  if (schema.anyOf ?? schema.oneOf ?? schema.allOf) throw unsupported();
  const nullable = schema.nullable === true;
  // What the value is, never the value: it may be a row holding what no answer may show.
  const mismatch = (value: unknown) =>
    new TypeError(
      `${path} is declared ${String(schema.type)} and holds ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}`,
    );
  if (schema.type === 'object') {
    if (schema.additionalProperties !== undefined && schema.additionalProperties !== false) {
      throw unsupported();
    }
    const required = new Set((schema.required as string[] | undefined) ?? []);
    const properties = Object.entries((schema.properties ?? {}) as Record<string, unknown>).map(
      ([key, property]) => ({
        key,
        required: required.has(key),
        project: projectionOf(property, models, `${path}.${key}`),
      }),
    );
    return (value) => {
      if (value === null && nullable) return null;
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        throw mismatch(value);
      }
      const kept: Record<string, unknown> = {};
      for (const property of properties) {
        const field = (value as Record<string, unknown>)[property.key];
        if (field === undefined) {
          if (property.required) throw new TypeError(`${path}.${property.key} is required`);
          continue;
        }
        kept[property.key] = property.project(field);
      }
      return kept;
    };
  }
  if (schema.type === 'array') {
    const item = projectionOf(schema.items, models, `${path}[]`);
    return (value) => {
      if (value === null && nullable) return null;
      if (!Array.isArray(value)) throw mismatch(value);
      // A plain array: `map` would make one of the value's own class, whose `toJSON` would write it.
      const kept: unknown[] = [];
      for (const element of value) kept.push(item(element));
      return kept;
    };
  }
  if (typeof schema.type === 'string' && PRIMITIVE_TYPES.has(schema.type)) {
    return (value) => {
      if (typeof value === 'object' && value !== null) throw mismatch(value);
      return value;
    };
  }
  throw unsupported();
}

const PAGE_START = '{"data":[';
const DATA_END = '],"meta":';
const COMMA = 0x2c;
const PAGE_END = 0x7d;

/**
 * The change feed's page as UTF-8: each entry kept to the document's `Change` with `record` as
 * its own resource's model (or null), so what no schema declares is dropped here too, as from
 * every other answer, then written by `JSON.stringify` on its own and encoded into one buffer,
 * which the ETag's digest and the socket take as it is. The bytes are those of
 * `JSON.stringify` of the whole page. Written whole, a page became one string of two-byte
 * characters as soon as one name was outside Latin-1 (as `Nazlı` is), and a rope of the
 * writer's pieces that encoding it flattened: in isolation 19–20 ms a page of expenses, against
 * 5 this way (docs/performance.md, item 109). fast-json-stringify, which writes the other
 * answers, built each entry from a hundred concatenated pieces (item 108), and Fastify's own
 * would serialize the document's union of five record models, trying each in turn.
 */
export function feedPageSerializer(): (page: FeedPage) => Buffer {
  const models: Models = modelsById();
  const change = withoutId(ChangeSchema);
  const entryOf = new Map(
    FEED_RESOURCE_NAMES.map((name) => [
      name,
      projectionOf(
        nullableForSerializer(
          {
            ...change,
            properties: {
              ...change.properties,
              record: Type.Union([ref(FEED_RECORD_SCHEMAS[name]), Type.Null()]),
            },
          },
          models,
        ),
        models,
        `${name} entry`,
      ),
    ]),
  );
  const keepMeta = projectionOf(ChangesPageSchema.properties.meta, models, 'meta');
  return (page) => {
    const entries = page.data.map((entry) => {
      const keep = entryOf.get(entry.resource);
      if (!keep) throw new Error(`the change feed has no resource ${entry.resource}`);
      return JSON.stringify(keep(entry));
    });
    const meta = JSON.stringify(keepMeta(page.meta));
    let length = PAGE_START.length + Math.max(entries.length - 1, 0) + DATA_END.length + 1;
    for (const entry of entries) length += Buffer.byteLength(entry);
    length += Buffer.byteLength(meta);
    const body = Buffer.allocUnsafe(length);
    let at = body.write(PAGE_START);
    for (const [index, entry] of entries.entries()) {
      if (index > 0) body[at++] = COMMA;
      at += body.write(entry, at);
    }
    at += body.write(DATA_END, at);
    at += body.write(meta, at);
    body[at] = PAGE_END;
    return body;
  };
}
