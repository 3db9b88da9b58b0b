import { type Kysely, sql } from 'kysely';

// Frozen in time: this file imports nothing from the app.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was.
type AnyDb = Kysely<any>;

/** The folded columns of each table, as migration 0001 made them. */
const FOLDED: Array<[table: string, columns: [string, string]]> = [
  ['employees', ['name_folded', 'number_folded']],
  ['expenses', ['title_folded', 'merchant_folded']],
];

/**
 * Folding now maps the final sigma ς to σ: JavaScript lower-cases a capital Σ at the end of a
 * word to ς and elsewhere to σ, so `ΟΔΥΣ` folded to `οδυς` and did not find "Οδυσσεύς". The
 * stored folded texts that hold a ς are folded again (SQLite's search tables follow through
 * their triggers), the searched expense texts of their companies counted again, and those
 * companies get a new data version, their list samples with it (they hold no folded text), so
 * no answer cached under the old one is served. The version follows `nextDataVersion` of the
 * time: one more, or the time in milliseconds where that is larger.
 */
export async function up(db: AnyDb): Promise<void> {
  const companies = new Set<number>();
  for (const [table, [a, b]] of FOLDED) {
    const { rows } = await sql<{ company_id: number | string }>`update ${sql.table(table)}
      set ${sql.ref(a)} = replace(${sql.ref(a)}, 'ς', 'σ'), ${sql.ref(b)} = replace(${sql.ref(b)}, 'ς', 'σ')
      where ${sql.ref(a)} like '%ς%' or ${sql.ref(b)} like '%ς%'
      returning company_id`.execute(db);
    for (const row of rows) companies.add(Number(row.company_id));
  }
  const at = Date.now();
  const next = sql`case when data_version + 1 > ${at} then data_version + 1 else cast(${at} as bigint) end`;
  const ids = [...companies];
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = sql.join(ids.slice(i, i + 500));
    await sql`delete from expense_texts where company_id in (${chunk})`.execute(db);
    await sql`insert into expense_texts
        (company_id, status, category_id, title_folded, merchant_folded, expenses)
      select company_id, status, category_id, title_folded, merchant_folded, count(*)
      from expenses where company_id in (${chunk})
      group by company_id, status, category_id, title_folded, merchant_folded`.execute(db);
    await sql`update list_sample_sets set data_version = ${next}
      where company_id in (${chunk}) and data_version =
        (select c.data_version from companies c where c.id = list_sample_sets.company_id)`.execute(
      db,
    );
    await sql`update companies set data_version = ${next} where id in (${chunk})`.execute(db);
  }
}

/** Nothing to undo: a ς folded to σ is what the earlier folding gave for a capital Σ. */
export async function down(): Promise<void> {}
