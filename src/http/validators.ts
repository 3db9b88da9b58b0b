import { AjvCompiler, type ValidatorFactory } from '@fastify/ajv-compiler';
import { compiledOnce } from './compiled-once.ts';

const pool = AjvCompiler();

/**
 * Request validators from one pool for the process, instead of Fastify's pool per app: an Ajv
 * instance per set of shared models and Ajv options (its formats and keywords added, ~55 ms),
 * and each route schema compiled once per instance (`compiledOnce`; ~70 ms an app). A validator
 * holds nothing of a request after it returns (Fastify reads its `errors` at once). Every app
 * of the service adds the same keywords (`registerQueryKeywords`): the pool tells instances
 * apart by models and options alone.
 */
export const pooledValidators: ValidatorFactory = (externalSchemas, options) => {
  const compile = pool(externalSchemas, options);
  return compiledOnce(compile, compile);
};
