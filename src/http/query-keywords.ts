import type { AnySchemaObject, ErrorObject, Plugin } from 'ajv';
import type { DataValidateFunction } from 'ajv/dist/types/index.js';
import {
  DOCUMENTED_AS_KEYWORD,
  ERROR_MESSAGE_KEYWORD,
  PLAIN_INTEGERS_KEYWORD,
} from '../schemas/common.ts';
import { PLAIN_DIGITS } from './params.ts';

/**
 * Keywords the route schemas carry beyond JSON Schema, taught to Fastify's Ajv (its `plugins`
 * option). `x-error-message` is an annotation the 422 formatter reads, `x-documented-as` one
 * the OpenAPI document generator reads. `x-plain-integers`, on a query object, refuses an
 * integer parameter whose text is anything but decimal digits: Ajv coerces query strings with
 * `+value`, which also reads `1e2`, `0x10`, `+5`, `10.0`, ` 5` and `Infinity` as numbers. An untyped keyword of the object runs before `properties`, so it
 * still sees the text as it was sent.
 */

/** The names of a query object's integer parameters. */
function integerParameters(objectSchema: Record<string, unknown>): string[] {
  const properties = (objectSchema.properties ?? {}) as Record<string, { type?: unknown }>;
  return Object.entries(properties)
    .filter(([, schema]) => schema.type === 'integer')
    .map(([name]) => name);
}

/** Decimal digits within a float's range: past ~1.8e308 they are Infinity to Ajv, which its integer and range checks take. */
const isPlainInteger = (text: unknown): boolean =>
  typeof text === 'string' && PLAIN_DIGITS.test(text) && Number.isFinite(Number(text));

function plainIntegersValidator(
  _value: unknown,
  objectSchema: AnySchemaObject,
): DataValidateFunction {
  const names = integerParameters(objectSchema);
  const validate: DataValidateFunction = (data: unknown) => {
    const query = (data ?? {}) as Record<string, unknown>;
    const issues: Partial<ErrorObject>[] = [];
    for (const name of names) {
      const value = query[name];
      if (value === undefined) continue;
      // A repeated parameter arrives as an array, which `properties` refuses on its own.
      const texts = Array.isArray(value) ? value : [value];
      if (texts.every(isPlainInteger)) continue;
      issues.push({
        instancePath: `/${name}`,
        keyword: PLAIN_INTEGERS_KEYWORD,
        message: 'must be written in plain decimal digits',
        params: {},
      });
    }
    validate.errors = issues;
    return issues.length === 0;
  };
  return validate;
}

export const registerQueryKeywords: Plugin<unknown> = (ajv) => {
  ajv.addKeyword({ keyword: ERROR_MESSAGE_KEYWORD, schemaType: 'string' });
  ajv.addKeyword({ keyword: DOCUMENTED_AS_KEYWORD, schemaType: 'object' });
  ajv.addKeyword({
    keyword: PLAIN_INTEGERS_KEYWORD,
    schemaType: 'boolean',
    errors: true,
    compile: plainIntegersValidator,
  });
  return ajv;
};
