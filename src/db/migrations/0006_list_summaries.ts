import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: this file imports nothing from the app.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was.
type AnyDb = Kysely<any>;

/**
 * Summaries of companies' long lists that imports keep, so that reading a list never scans a
 * million rows. The samples (see src/db/sampled-lists.ts): per company and list, the groups
 * (status and leave type or category) and their totals at one data version, and per sort
 * column every 1,000th row's sort key with the rows of each group up to it; for leaves, the
 * longest leave (days from its start to its end), which bounds date windows. Values and counts
 * are JSON text: they are read whole, never searched.
 */
export async function up(db: AnyDb): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const id = pg ? 'bigint' : 'integer';
  // The distinct searched texts of each company's expenses (see src/db/expense-texts.ts).
  await db.schema
    .createTable('expense_texts')
    .addColumn('company_id', id, (c) => c.notNull().references('companies.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('category_id', id, (c) => c.notNull())
    .addColumn('title_folded', pg ? sql`text collate "C"` : 'text', (c) => c.notNull())
    .addColumn('merchant_folded', pg ? sql`text collate "C"` : 'text', (c) => c.notNull())
    .addColumn('expenses', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('expense_texts_company')
    .on('expense_texts')
    .columns(['company_id', 'status', 'category_id'])
    .execute();
  await db.schema
    .createTable('list_sample_sets')
    .addColumn('company_id', id, (c) => c.notNull().references('companies.id'))
    .addColumn('list', 'text', (c) => c.notNull())
    .addColumn('data_version', 'bigint', (c) => c.notNull())
    .addColumn('groups', 'text', (c) => c.notNull())
    .addColumn('totals', 'text', (c) => c.notNull())
    .addColumn('longest_leave_days', 'integer')
    .addPrimaryKeyConstraint('list_sample_sets_pk', ['company_id', 'list'])
    .execute();
  await db.schema
    .createTable('list_samples')
    .addColumn('company_id', id, (c) => c.notNull())
    .addColumn('list', 'text', (c) => c.notNull())
    .addColumn('sort_column', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('sort_value', 'text', (c) => c.notNull())
    .addColumn('id', id, (c) => c.notNull())
    .addColumn('counts', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('list_samples_pk', ['company_id', 'list', 'sort_column', 'seq'])
    .addForeignKeyConstraint('list_samples_set', ['company_id', 'list'], 'list_sample_sets', [
      'company_id',
      'list',
    ])
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('expense_texts').execute();
  await db.schema.dropTable('list_samples').execute();
  await db.schema.dropTable('list_sample_sets').execute();
}
