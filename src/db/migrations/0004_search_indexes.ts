import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: this file imports nothing from the app.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was.
type AnyDb = Kysely<any>;

/**
 * Indexes for `search` (a substring of folded text), so a search over a million expenses
 * reads the matching rows, not all of them.
 *
 * PostgreSQL: pg_trgm GIN indexes, which `LIKE '%…%'` uses as it is.
 * SQLite: FTS5 tables with the trigram tokenizer over the folded columns, kept in step with
 * their table by triggers (external content: the text is stored once). The queries ask them
 * for terms of three characters or more; shorter ones fall back to LIKE.
 */
const SEARCHED: Array<[table: string, columns: [string, string]]> = [
  ['employees', ['name_folded', 'number_folded']],
  ['expenses', ['title_folded', 'merchant_folded']],
];

const isPostgres = (db: AnyDb) => db.getExecutor().adapter instanceof PostgresAdapter;

export async function up(db: AnyDb): Promise<void> {
  if (isPostgres(db)) {
    await sql`create extension if not exists pg_trgm`.execute(db);
    for (const [table, columns] of SEARCHED) {
      for (const column of columns) {
        await sql`create index ${sql.id(`${table}_${column}_trgm`)} on ${sql.id(table)} using gin (${sql.id(column)} gin_trgm_ops)`.execute(
          db,
        );
      }
    }
    return;
  }
  for (const [table, [a, b]] of SEARCHED) {
    const fts = `${table}_search`;
    await sql
      .raw(
        `create virtual table ${fts} using fts5(${a}, ${b}, content='${table}', content_rowid='id', tokenize='trigram case_sensitive 1')`,
      )
      .execute(db);
    await sql
      .raw(
        `create trigger ${fts}_insert after insert on ${table} begin
           insert into ${fts}(rowid, ${a}, ${b}) values (new.id, new.${a}, new.${b});
         end`,
      )
      .execute(db);
    await sql
      .raw(
        `create trigger ${fts}_delete after delete on ${table} begin
           insert into ${fts}(${fts}, rowid, ${a}, ${b}) values ('delete', old.id, old.${a}, old.${b});
         end`,
      )
      .execute(db);
    await sql
      .raw(
        `create trigger ${fts}_update after update of ${a}, ${b} on ${table} begin
           insert into ${fts}(${fts}, rowid, ${a}, ${b}) values ('delete', old.id, old.${a}, old.${b});
           insert into ${fts}(rowid, ${a}, ${b}) values (new.id, new.${a}, new.${b});
         end`,
      )
      .execute(db);
    await sql.raw(`insert into ${fts}(${fts}) values ('rebuild')`).execute(db);
  }
}

export async function down(db: AnyDb): Promise<void> {
  if (isPostgres(db)) {
    for (const [table, columns] of SEARCHED) {
      for (const column of columns) {
        await sql`drop index ${sql.id(`${table}_${column}_trgm`)}`.execute(db);
      }
    }
    return;
  }
  for (const [table] of SEARCHED) {
    const fts = `${table}_search`;
    for (const suffix of ['insert', 'delete', 'update']) {
      await sql.raw(`drop trigger ${fts}_${suffix}`).execute(db);
    }
    await sql.raw(`drop table ${fts}`).execute(db);
  }
}
