import { AjvCompiler, type ValidatorFactory } from '@fastify/ajv-compiler';

type Compile = ReturnType<ValidatorFactory>;
type Validator = ReturnType<Compile>;

const pool = AjvCompiler();
/** What each pooled compiler compiled, by the route schema's text. */
const compiled = new WeakMap<Compile, Map<string, Validator>>();

/**
 * Request validators from one pool for the process, instead of Fastify's pool per app: an Ajv
 * instance per set of shared models and Ajv options (its formats and keywords added, ~55 ms),
 * and each route schema compiled once per instance, found again by its text (Fastify hands the
 * compiler new schema objects each time an app is built; ~70 ms an app). An app built again
 * with the same models and options (the admin listener's beside the API's, each test's app)
 * reuses both. A validator holds nothing of a request after it returns (Fastify reads its
 * `errors` at once), so apps share it as an app's routes do. Every app of the service adds the
 * same keywords (`registerQueryKeywords`): the pool tells instances apart by models and
 * options alone.
 */
export const pooledValidators: ValidatorFactory = (externalSchemas, options) => {
  const compile = pool(externalSchemas, options);
  let byText = compiled.get(compile);
  if (!byText) {
    byText = new Map();
    compiled.set(compile, byText);
  }
  const validators = byText;
  return (route) => {
    const text = JSON.stringify(route.schema);
    let validator = validators.get(text);
    if (!validator) {
      validator = compile(route);
      validators.set(text, validator);
    }
    return validator;
  };
};
