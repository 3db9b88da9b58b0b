import { createHash } from 'node:crypto';
import {
  type Compilable,
  type CompiledQuery,
  type Expression,
  type PostgresPool,
  type PostgresPoolClient,
  type SqlBool,
  sql,
} from 'kysely';
import type pg from 'pg';
import type { Db } from './database.ts';
import { isPostgres } from './search.ts';
import { counted } from './statement-ledger.ts';

const MARK = '/* plan once */';

/**
 * Stands for one of a prepared query's values while the query is built: Kysely keeps it as
 * a parameter, and each call puts the value in its place (encoded, for SQLite's id lists).
 */
class Slot {
  readonly name: string;
  readonly encode?: (value: unknown) => unknown;

  constructor(name: string, encode?: (value: unknown) => unknown) {
    this.name = name;
    this.encode = encode;
  }
}

type Binding = { readonly slot: Slot } | { readonly constant: unknown };

interface Prepared<O> {
  readonly query: CompiledQuery<O>;
  readonly bindings: readonly Binding[];
}

/** What `preparedQuery` builds: a select (or any query) that can take the plan-once mark. */
type Markable<O> = Compilable<O> & {
  modifyEnd(modifier: Expression<unknown>): Markable<O>;
};

/**
 * A query whose text never changes, as a function of its values (a look-up by primary key, the
 * rows among a list of ids given with `oneOfIds`, a company's reference list). Kysely builds
 * and compiles it once per database handle, with stand-ins for the values; each call binds its
 * own values to that text. Building and compiling the joined look-up of an expense took 38 µs
 * of CPU, as long as PostgreSQL took to run it. On PostgreSQL it is also a named prepared
 * statement, parsed and planned once per connection: planning that look-up cost six times what
 * running it does. Its best plan must not depend on the values, so list queries, whose plan
 * depends on the company's size, are not prepared.
 *
 * `build` may only hand its values to Kysely as values (a comparison, a `sql` template's
 * parameter, `oneOfIds`): it sees stand-ins, not the values. A value read for anything else
 * (its length, a branch) is caught on the first call, which throws.
 */
export function preparedQuery<V extends Record<string, unknown>, O>(
  build: (db: Db, values: V) => Markable<O>,
): (db: Db, values: V) => Promise<O[]> {
  // Per handle: the SQL text depends on the dialect, and a handle is one dialect.
  const prepared = new WeakMap<Db, Prepared<O>>();
  return async (db, values) => {
    let entry = prepared.get(db);
    if (entry === undefined) {
      entry = prepare(db, build);
      prepared.set(db, entry);
    }
    const parameters = entry.bindings.map((binding) => {
      if (!('slot' in binding)) return binding.constant;
      const { name, encode } = binding.slot;
      return encode ? encode(values[name]) : values[name];
    });
    const result = await db.executeQuery<O>({ ...entry.query, parameters });
    return result.rows;
  };
}

function prepare<V extends Record<string, unknown>, O>(
  db: Db,
  build: (db: Db, values: V) => Markable<O>,
): Prepared<O> {
  const read = new Set<string>();
  const standIns = new Proxy({} as V, {
    get(_target, name) {
      if (typeof name !== 'string') return undefined;
      read.add(name);
      return new Slot(name);
    },
  });
  const query = build(db, standIns).modifyEnd(sql.raw(MARK)).compile();
  const bindings = query.parameters.map(
    (value): Binding => (value instanceof Slot ? { slot: value } : { constant: value }),
  );
  const bound = new Set(
    bindings.flatMap((binding) => ('slot' in binding ? [binding.slot.name] : [])),
  );
  for (const name of read) {
    if (!bound.has(name)) {
      throw new Error(`preparedQuery: the value '${name}' was read but is not a parameter`);
    }
  }
  return { query, bindings };
}

const names = new Map<string, string>();

/** The statement's name on every connection: derived from its text, so equal texts share it. */
function statementName(text: string): string {
  let name = names.get(text);
  if (!name) {
    name = `cdapi_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, name);
  }
  return name;
}

/**
 * The pool Kysely is given: the same connections, but a query that ends with the mark is sent
 * as a named prepared statement (pg prepares it on a connection's first use and reuses it),
 * and every statement is counted in the ledger of the answer that sends it (`counted`).
 * Each pooled connection keeps one wrapper: Kysely keys its per-connection state by the object
 * `connect` returns, and a new one per checkout made it build that state on every query (and
 * grew its two tables of connections to 4 MB each under load, measured).
 */
export function planningOncePool(pool: pg.Pool): PostgresPool {
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      let wrapper = wrappers.get(client);
      if (!wrapper) {
        wrapper = planningOnceClient(client);
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
  };
}

function planningOnceClient(client: pg.PoolClient): PostgresPoolClient {
  const query = (text: unknown, parameters?: readonly unknown[]) => {
    const values = parameters && [...parameters];
    if (typeof text === 'string' && text.endsWith(MARK)) {
      return counted(() => client.query({ name: statementName(text), text, values }));
    }
    // biome-ignore lint/suspicious/noExplicitAny: pg's overloads pass through (Kysely sends text).
    return counted(() => client.query(text as any, values));
  };
  return {
    query: query as unknown as PostgresPoolClient['query'],
    release: () => client.release(),
  };
}

/**
 * `column` is one of `ids`, as one parameter, so the query's text is the same for any number
 * of ids and a prepared query holding it is built and planned once: PostgreSQL gets an array
 * (`= any($n)`), SQLite, which has no arrays, a JSON array it reads with `json_each`. An `in`
 * list would be a new text for every count of ids, parsed and planned again (on PostgreSQL,
 * planning the joined rows of a 25-row page cost 0.8–2.6 ms against 1–1.7 to run it).
 */
export function oneOfIds(db: Db, column: string, ids: readonly number[]): Expression<SqlBool> {
  if (isPostgres(db)) return sql<SqlBool>`${sql.ref(column)} = any(${ids})`;
  const json =
    ids instanceof Slot
      ? new Slot(ids.name, (value) => JSON.stringify(value))
      : JSON.stringify(ids);
  return sql<SqlBool>`${sql.ref(column)} in (select value from json_each(${json}))`;
}
