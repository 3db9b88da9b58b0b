/** What was compiled in this process: by the compiler's group, then by the schema's text. */
const compiled = new Map<unknown, Map<string, unknown>>();

/**
 * `compile`, each schema compiled once per process for `group` (what else decides the result:
 * the shared models and options) and found again by its text. Fastify builds an app's
 * serializers and validators anew each time an app is built, from new schema objects, so
 * identity would never match; an app built again (the admin listener's beside the API's, each
 * test's app) gets what the first compiled. What is compiled is a function of its schema and
 * group alone, so apps share it as an app's routes do.
 */
export function compiledOnce<Route extends { schema?: unknown }, Compiled>(
  group: unknown,
  compile: (route: Route) => Compiled,
): (route: Route) => Compiled {
  let bySchema = compiled.get(group);
  if (!bySchema) {
    bySchema = new Map();
    compiled.set(group, bySchema);
  }
  const known = bySchema;
  return (route) => {
    const text = JSON.stringify(route.schema);
    if (!known.has(text)) known.set(text, compile(route));
    return known.get(text) as Compiled;
  };
}
