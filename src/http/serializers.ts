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

/**
 * The change feed's page, each entry written by the serializer of its own resource: the
 * document's `Change` with `record` as that resource's model (or null). Fastify's would
 * serialize the document's union of five record models, trying each in turn (20× slower than
 * `JSON.stringify`). What no schema declares is dropped here too, as from every other answer.
 */
export function feedPageSerializer(): (page: FeedPage) => string {
  const compile = buildSerializer()(modelsById(), undefined);
  const serializer = (schema: unknown) =>
    compile({ schema, method: 'GET', url: '/changes', httpStatus: '200' }) as (
      data: unknown,
    ) => string;
  const change = withoutId(ChangeSchema);
  const entryOf = Object.fromEntries(
    FEED_RESOURCE_NAMES.map((name) => [
      name,
      serializer({
        ...change,
        properties: {
          ...change.properties,
          record: Type.Union([ref(FEED_RECORD_SCHEMAS[name]), Type.Null()]),
        },
      }),
    ]),
  );
  const meta = serializer(ChangesPageSchema.properties.meta);
  return (page) => {
    const entries = page.data.map((entry) => {
      const write = entryOf[entry.resource];
      if (!write) throw new Error(`the change feed has no resource ${entry.resource}`);
      return write(entry);
    });
    return `{"data":[${entries.join(',')}],"meta":${meta(page.meta)}}`;
  };
}
