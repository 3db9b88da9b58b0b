import { type ColumnDataType, type Expression, type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: this file imports nothing from the app, so later changes to the app's
// types can never change what this migration did.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was.
type AnyDb = Kysely<any>;

function columnTypes(db: AnyDb) {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  return {
    pg,
    id: (pg ? 'bigint' : 'integer') as ColumnDataType,
    int: 'integer' as ColumnDataType,
    money: (pg ? 'bigint' : 'integer') as ColumnDataType,
    number: (pg ? 'double precision' : 'real') as ColumnDataType,
    date: (pg ? 'date' : 'text') as ColumnDataType,
    timestamp: (pg ? 'timestamptz' : 'text') as ColumnDataType,
    flag: (pg ? 'boolean' : 'integer') as ColumnDataType,
    // Folded text compares by code point on both engines (SQLite's BINARY default does;
    // PostgreSQL's database locale would reorder punctuation and spaces), so sorts agree.
    folded: (pg ? sql`text collate "C"` : 'text') as ColumnDataType | Expression<unknown>,
  };
}

export async function up(db: AnyDb): Promise<void> {
  const t = columnTypes(db);
  const serialId = (table: string) =>
    db.schema
      .createTable(table)
      .addColumn('id', t.id, (c) =>
        t.pg ? c.primaryKey().generatedByDefaultAsIdentity() : c.primaryKey().autoIncrement(),
      );
  // Every tenant table is unique on (company_id, id) so children can reference their parent
  // *within the same company*: a record can never point at another company's record.
  const tenantTable = (table: string) =>
    db.schema
      .createTable(table)
      .addColumn('id', t.id, (c) => c.primaryKey())
      .addColumn('company_id', t.id, (c) => c.notNull().references('companies.id'));

  await db.schema
    .createTable('companies')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('timezone', 'text', (c) => c.notNull())
    .addColumn('active', t.flag, (c) => c.notNull())
    .execute();

  await serialId('api_keys')
    .addColumn('company_id', t.id, (c) => c.notNull().references('companies.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('per_minute', t.int, (c) => c.notNull())
    .addColumn('per_hour', t.int, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('last_used_at', t.timestamp)
    .addColumn('revoked_at', t.timestamp)
    .execute();
  await db.schema
    .createIndex('api_keys_company')
    .on('api_keys')
    .columns(['company_id', 'id'])
    .execute();

  await tenantTable('employees')
    .addColumn('employee_number', 'text', (c) => c.notNull())
    .addColumn('first_name', 'text', (c) => c.notNull())
    .addColumn('last_name', 'text', (c) => c.notNull())
    .addColumn('full_name', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('department', 'text', (c) => c.notNull())
    .addColumn('position', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('hire_date', t.date, (c) => c.notNull())
    .addColumn('national_id', 'text')
    .addColumn('salary_e4', t.money)
    .addColumn('iban', 'text')
    .addColumn('address', 'text')
    .addColumn('name_folded', t.folded, (c) => c.notNull())
    .addColumn('number_folded', t.folded, (c) => c.notNull())
    .addUniqueConstraint('employees_company_id_id', ['company_id', 'id'])
    .execute();

  await tenantTable('leave_types')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('type_key', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('max_days_per_year', t.int, (c) => c.notNull())
    .addColumn('quota_type', 'text', (c) => c.notNull())
    .addColumn('requires_document', t.flag, (c) => c.notNull())
    .addColumn('affects_annual_balance', t.flag, (c) => c.notNull())
    .addColumn('active', t.flag, (c) => c.notNull())
    .addUniqueConstraint('leave_types_company_id_id', ['company_id', 'id'])
    .execute();

  await tenantTable('leaves')
    .addColumn('employee_id', t.id, (c) => c.notNull())
    .addColumn('leave_type_id', t.id, (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('start_date', t.date, (c) => c.notNull())
    .addColumn('end_date', t.date, (c) => c.notNull())
    .addColumn('days', t.number, (c) => c.notNull())
    .addColumn('duration_type', 'text', (c) => c.notNull())
    .addColumn('start_time', 'text')
    .addColumn('end_time', 'text')
    .addColumn('hours', t.number)
    .addColumn('reason', 'text')
    .addColumn('rejection_reason', 'text')
    .addColumn('substitute_employee_id', t.id)
    .addColumn('approved_at', t.timestamp)
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .addColumn('document_deadline', t.date)
    .addColumn('document_obligation_status', 'text')
    .addUniqueConstraint('leaves_company_id_id', ['company_id', 'id'])
    .addForeignKeyConstraint('leaves_employee', ['company_id', 'employee_id'], 'employees', [
      'company_id',
      'id',
    ])
    .addForeignKeyConstraint('leaves_leave_type', ['company_id', 'leave_type_id'], 'leave_types', [
      'company_id',
      'id',
    ])
    .addForeignKeyConstraint(
      'leaves_substitute',
      ['company_id', 'substitute_employee_id'],
      'employees',
      ['company_id', 'id'],
    )
    .execute();

  await serialId('leave_attachments')
    .addColumn('company_id', t.id, (c) => c.notNull())
    .addColumn('leave_id', t.id, (c) => c.notNull())
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addForeignKeyConstraint('leave_attachments_leave', ['company_id', 'leave_id'], 'leaves', [
      'company_id',
      'id',
    ])
    .execute();

  await tenantTable('expense_categories')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('requires_receipt', t.flag, (c) => c.notNull())
    .addColumn('max_amount_e4', t.money)
    .addColumn('active', t.flag, (c) => c.notNull())
    .addUniqueConstraint('expense_categories_company_id_id', ['company_id', 'id'])
    .execute();

  await tenantTable('expenses')
    .addColumn('employee_id', t.id, (c) => c.notNull())
    .addColumn('category_id', t.id, (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('amount_e4', t.money, (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('tax_amount_e4', t.money, (c) => c.notNull())
    .addColumn('expense_date', t.date, (c) => c.notNull())
    .addColumn('merchant_name', 'text', (c) => c.notNull())
    .addColumn('payment_method', 'text', (c) => c.notNull())
    .addColumn('approved_at', t.timestamp)
    .addColumn('paid_at', t.timestamp)
    .addColumn('rejected_reason', 'text')
    .addColumn('submitted_at', t.timestamp, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .addColumn('title_folded', t.folded, (c) => c.notNull())
    .addColumn('merchant_folded', t.folded, (c) => c.notNull())
    .addUniqueConstraint('expenses_company_id_id', ['company_id', 'id'])
    .addForeignKeyConstraint('expenses_employee', ['company_id', 'employee_id'], 'employees', [
      'company_id',
      'id',
    ])
    .addForeignKeyConstraint(
      'expenses_category',
      ['company_id', 'category_id'],
      'expense_categories',
      ['company_id', 'id'],
    )
    .execute();

  await serialId('expense_items')
    .addColumn('company_id', t.id, (c) => c.notNull())
    .addColumn('expense_id', t.id, (c) => c.notNull())
    .addColumn('position', t.int, (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('quantity', t.number, (c) => c.notNull())
    .addColumn('price_e4', t.money, (c) => c.notNull())
    .addForeignKeyConstraint('expense_items_expense', ['company_id', 'expense_id'], 'expenses', [
      'company_id',
      'id',
    ])
    .execute();

  await db.schema
    .createTable('receipts')
    .addColumn('expense_id', t.id, (c) => c.primaryKey())
    .addColumn('company_id', t.id, (c) => c.notNull())
    .addColumn('original_key', 'text', (c) => c.notNull())
    .addColumn('original_content_type', 'text', (c) => c.notNull())
    .addColumn('original_size', t.int, (c) => c.notNull())
    .addColumn('original_sha256', 'text', (c) => c.notNull())
    .addColumn('processed_key', 'text', (c) => c.notNull())
    .addColumn('processed_size', t.int, (c) => c.notNull())
    .addForeignKeyConstraint('receipts_expense', ['company_id', 'expense_id'], 'expenses', [
      'company_id',
      'id',
    ])
    .execute();

  // Every index is led by company_id: each API query filters by the key's company first.
  // The trailing id keeps the default id order (and its tie-breaker) inside the index.
  const indexes: Array<[table: string, columns: string[]]> = [
    ['employees', ['company_id', 'status', 'id']],
    ['employees', ['company_id', 'name_folded', 'id']],
    ['employees', ['company_id', 'number_folded', 'id']],
    ['employees', ['company_id', 'hire_date', 'id']],
    ['leaves', ['company_id', 'status', 'id']],
    ['leaves', ['company_id', 'employee_id', 'id']],
    ['leaves', ['company_id', 'leave_type_id', 'id']],
    ['leaves', ['company_id', 'start_date', 'id']],
    ['leaves', ['company_id', 'end_date', 'id']],
    ['leaves', ['company_id', 'created_at', 'id']],
    ['leaves', ['company_id', 'updated_at', 'id']],
    ['leave_attachments', ['company_id', 'leave_id']],
    ['expenses', ['company_id', 'status', 'id']],
    ['expenses', ['company_id', 'employee_id', 'id']],
    ['expenses', ['company_id', 'category_id', 'id']],
    ['expenses', ['company_id', 'expense_date', 'id']],
    ['expenses', ['company_id', 'amount_e4', 'id']],
    ['expenses', ['company_id', 'created_at', 'id']],
    ['expenses', ['company_id', 'updated_at', 'id']],
    ['expense_items', ['company_id', 'expense_id', 'position']],
  ];
  for (const [table, columns] of indexes) {
    const name = `${table}_${columns.slice(1).join('_')}`;
    await db.schema.createIndex(name).on(table).columns(columns).execute();
  }
}

export async function down(db: AnyDb): Promise<void> {
  for (const table of [
    'receipts',
    'expense_items',
    'expenses',
    'expense_categories',
    'leave_attachments',
    'leaves',
    'leave_types',
    'employees',
    'api_keys',
    'companies',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
