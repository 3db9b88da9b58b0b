import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { registerQueryKeywords } from '../../src/http/query-keywords.ts';
import {
  buildSerializer,
  feedPageSerializer,
  projectionOf,
  serializedModels,
} from '../../src/http/serializers.ts';
import { pooledValidators } from '../../src/http/validators.ts';
import { dataOf, listOf } from '../../src/schemas/common.ts';
import { ExpenseDetailSchema } from '../../src/schemas/expenses.ts';
import { LeaveSchema } from '../../src/schemas/leaves.ts';
import { modelsById } from '../../src/schemas/models.ts';

const models = modelsById();

/** Where a schema (as JSON) still holds an `anyOf`, as dotted paths. */
function unionsIn(schema: unknown, path: string, found: string[] = []): string[] {
  if (Array.isArray(schema)) {
    for (const [i, item] of schema.entries()) unionsIn(item, `${path}.${i}`, found);
  } else if (typeof schema === 'object' && schema !== null) {
    if ('anyOf' in schema) found.push(path);
    for (const [key, value] of Object.entries(schema)) unionsIn(value, `${path}.${key}`, found);
  }
  return found;
}

const serializerOf = (schema: unknown) =>
  buildSerializer()(models, {})({ method: 'GET', url: '/', httpStatus: '200', schema });

const employee = {
  id: 6,
  employee_number: 'E-00006',
  full_name: 'Zeynep Yılmaz',
  department: 'Ops',
};
const leave = {
  id: 201,
  status: 'approved',
  employee,
  leave_type: { id: 1, name: 'Annual leave', type_key: 'annual' },
  start_date: '2022-02-18',
  end_date: '2022-02-18',
  days: 0.5,
  duration_type: 'hourly',
  start_time: '09:00',
  end_time: '13:00',
  hours: 4,
  reason: 'Doctor appointment',
  rejection_reason: 'Please split it.',
  substitute_employee: { ...employee, id: 7 },
  approved_at: '2022-02-14T09:39:00Z',
  created_at: '2022-02-13T08:50:00Z',
  updated_at: '2022-02-14T09:39:00Z',
};
const url = 'https://api.example.com/api/company/v1/expenses/201/receipt';
const expense = {
  id: 201,
  status: 'paid',
  title: 'Havalimanı taksi',
  description: 'From the airport',
  amount: 264.3,
  currency: 'TRY',
  tax_amount: 44.05,
  expense_date: '2022-01-28',
  merchant_name: 'BiTaksi',
  payment_method: 'corporate_card',
  category: { id: 1, name: 'Travel' },
  employee,
  has_receipt: true,
  receipt_url: url,
  approved_at: '2022-02-01T11:29:00Z',
  paid_at: '2022-02-09T13:07:00Z',
  rejected_reason: 'Duplicate',
  submitted_at: '2022-01-31T07:09:00Z',
  created_at: '2022-01-28T11:04:00Z',
  updated_at: '2022-02-09T13:07:00Z',
  items: [{ name: 'Taxi', quantity: 1, price: 264.3 }],
  receipt: {
    url,
    processed_url: `${url}?variant=processed`,
    original_url: `${url}?variant=original`,
  },
};
/** The fields of a model that may be null (a union with null). */
const nullableFieldsOf = (model: { properties: object }) =>
  Object.entries(model.properties as Record<string, { anyOf?: { type?: unknown }[] }>)
    .filter(([, field]) => field.anyOf?.some((branch) => branch.type === 'null'))
    .map(([name]) => name);
/** The record with every field that may be null set to null. */
const nulled = (record: Record<string, unknown>, fields: string[]) =>
  Object.fromEntries(Object.entries(record).map(([k, v]) => [k, fields.includes(k) ? null : v]));

describe('response serializers', () => {
  it('see a field that may be null as nullable, not as a union: only a change’s record keeps its anyOf', () => {
    const serialized = serializedModels(models);
    assert.deepEqual(Object.keys(serialized), Object.keys(models));
    // The change feed writes each entry with its own resource's record (feedPageSerializer).
    assert.deepEqual(
      Object.entries(serialized).flatMap(([id, model]) => unionsIn(model, id)),
      ['Change.properties.record'],
    );
    // The models themselves, which the OpenAPI document shows, keep their unions.
    assert.ok(unionsIn(LeaveSchema, 'Leave').length > 0);
    assert.ok(unionsIn(ExpenseDetailSchema, 'ExpenseDetail').length > 0);
  });

  it('write what JSON.stringify writes, each field that may be null null or not', () => {
    const leaves = serializerOf(listOf(LeaveSchema));
    const nullableLeave = nullableFieldsOf(LeaveSchema);
    const page = {
      data: [leave, nulled(leave, nullableLeave)],
      meta: { current_page: 1, per_page: 25, total: 2, last_page: 1, from: 1, to: 2 },
    };
    assert.equal(leaves(page), JSON.stringify(page));
    const empty = { data: [], meta: { ...page.meta, total: 0, from: null, to: null } };
    assert.equal(leaves(empty), JSON.stringify(empty));

    const expenses = serializerOf(dataOf(ExpenseDetailSchema));
    const nullableExpense = nullableFieldsOf(ExpenseDetailSchema);
    assert.deepEqual([nullableLeave.length, nullableExpense.length], [7, 6]);
    for (const record of [expense, nulled(expense, nullableExpense)]) {
      assert.equal(expenses({ data: record }), JSON.stringify({ data: record }));
    }
    // Undeclared fields are still dropped, in an inlined model as anywhere.
    const extra = { ...leave, salary: 1, substitute_employee: { ...employee, salary: 1 } };
    assert.equal(leaves({ ...page, data: [extra] }).includes('salary'), false);
  });

  it('are compiled once per process for the same schema and models, and never shared past them', () => {
    const route = (schema: unknown) => ({ method: 'GET', url: '/', httpStatus: '200', schema });
    const narrow = { type: 'object', properties: { id: { type: 'integer' } } };
    const wide = {
      type: 'object',
      properties: { id: { type: 'integer' }, name: { type: 'string' } },
    };
    const record = { id: 1, name: 'Ayşe', salary: 1 };
    // Apps built one after another (each test's, the admin listener's) get the same function.
    const first = buildSerializer()(models, {})(route(listOf(LeaveSchema)));
    assert.equal(buildSerializer()(models, {})(route(listOf(LeaveSchema))), first);
    // Another schema, even at the same route, has its own.
    const compile = buildSerializer()(models, {});
    assert.equal(compile(route(narrow))(record), '{"id":1}');
    assert.equal(compile(route(wide))(record), '{"id":1,"name":"Ayşe"}');
    // The same route schema pointing at models that differ: each app's models decide.
    const pointing = { $ref: 'Thing' };
    const withModel = (model: object) =>
      buildSerializer()({ Thing: { $id: 'Thing', ...model } }, {})(route(pointing));
    assert.equal(withModel(narrow)(record), '{"id":1}');
    assert.equal(withModel(wide)(record), '{"id":1,"name":"Ayşe"}');
  });
});

describe('the change feed’s serializer', () => {
  const records = {
    employee: {
      id: 6,
      employee_number: 'E-00006',
      full_name: 'Zeynep Yılmaz',
      email: 'zeynep@example.com',
      department: 'Ops',
      position: 'Lead',
      status: 'active',
      hire_date: '2020-01-06',
      updated_at: '2022-02-14T09:39:00Z',
    },
    leave_type: {
      id: 1,
      name: 'Annual leave',
      type_key: 'annual',
      description: null,
      max_days_per_year: 14,
      quota_type: 'yearly',
      requires_document: false,
      affects_annual_balance: true,
    },
    leave: {
      ...leave,
      document: { deadline: '2022-02-20', obligation_status: 'pending', has_attachments: true },
    },
    expense_category: {
      id: 1,
      name: 'Travel',
      description: 'Taxis, trains',
      requires_receipt: true,
      max_amount: 1500.5,
    },
    expense,
  };
  const entry = (
    resource: keyof typeof records,
    change: 'upsert' | 'delete',
  ): Record<string, unknown> => ({
    cursor: `NDIuMi4x${resource.length}`,
    resource,
    id: records[resource].id,
    change,
    changed_at: '2022-02-14T09:40:00Z',
    record: change === 'upsert' ? records[resource] : null,
  });
  const page = (data: Record<string, unknown>[]) => ({
    data,
    meta: { next_cursor: 'NDIuMi4xMDE3', has_more: true },
  });
  const writeBytes = feedPageSerializer() as (page: unknown) => Buffer;
  const write = (data: unknown) => writeBytes(data).toString();

  it('writes the UTF-8 bytes of what JSON.stringify writes, an upsert of each resource and deletes', () => {
    const names = Object.keys(records) as (keyof typeof records)[];
    const full = page(names.flatMap((name) => [entry(name, 'upsert'), entry(name, 'delete')]));
    assert.deepEqual(writeBytes(full), Buffer.from(JSON.stringify(full)));
    assert.deepEqual(writeBytes(page([])), Buffer.from(JSON.stringify(page([]))));
    // Entries of one-byte text (ASCII, Latin-1) and of two-byte text (outside Latin-1, astral,
    // a lone surrogate, which JSON.stringify escapes).
    const named = (full_name: string) => ({
      ...entry('employee', 'upsert'),
      record: { ...records.employee, full_name },
    });
    const mixed = page(
      ['Ada Lovelace', 'José Núñez', 'Nazlı Şahin', 'Ann 😀 \u2028 "q"', 'Half \ud800'].map(named),
    );
    assert.deepEqual(writeBytes(mixed), Buffer.from(JSON.stringify(mixed)));
  });

  it('drops every field its resource’s schema does not declare, in entries and records alike', () => {
    const leaking = page([
      { ...entry('employee', 'upsert'), company_id: 2 },
      {
        ...entry('employee', 'upsert'),
        record: { ...records.employee, salary_e4: 1, national_id: '1', iban: 'TR00' },
      },
      {
        ...entry('leave', 'upsert'),
        record: {
          ...records.leave,
          employee: { ...employee, salary: 1 },
          document: { ...records.leave.document, files: ['sick-note.pdf'] },
        },
      },
      {
        ...entry('expense', 'upsert'),
        record: { ...expense, items: [{ ...expense.items[0], cost_center: 'x' }] },
      },
    ]);
    const written = JSON.parse(write(leaking));
    const clean = page([
      entry('employee', 'upsert'),
      entry('employee', 'upsert'),
      entry('leave', 'upsert'),
      entry('expense', 'upsert'),
    ]);
    assert.deepEqual(written, clean);
  });

  it('refuses a record with an object where a value is declared (naming its kind, not its content) or a required field missing', () => {
    const { full_name: _name, ...nameless } = records.employee;
    assert.throws(
      () => write(page([{ ...entry('employee', 'upsert'), record: nameless }])),
      /employee entry\.record\.full_name is required/,
    );
    const row = { ...records.employee, department: { name: 'Ops', budget_e4: 1 } };
    assert.throws(
      () => write(page([{ ...entry('employee', 'upsert'), record: row }])),
      (error: Error) =>
        error.message === 'employee entry.record.department is declared string and holds object',
    );
  });
});

describe('projectionOf', () => {
  it('refuses, when it is built, a schema it would not keep to what it declares', () => {
    const wide = {
      type: 'object',
      properties: { id: { type: 'integer' } },
      additionalProperties: true,
    };
    assert.throws(() => projectionOf(wide, models, 'wide'), /does not support wide/);
    const union = { anyOf: [{ type: 'string' }, { type: 'object', properties: {} }] };
    assert.throws(() => projectionOf(union, models, 'union'), /does not support union/);
  });

  it('keeps to what a schema declares, in its order, whatever a value’s keys, order or prototype', () => {
    const keep = projectionOf(
      {
        type: 'object',
        properties: {
          id: { type: 'integer' },
          tags: {
            type: 'array',
            items: { type: 'object', properties: { name: { type: 'string' } } },
          },
          note: { type: 'string', nullable: true },
        },
        required: ['id'],
      },
      models,
      'thing',
    );
    const extra = { note: 'n', tags: [{ name: 'a' }, { name: 'b', secret: 1 }], id: 1, x: 2 };
    assert.equal(
      JSON.stringify(keep(extra)),
      '{"id":1,"tags":[{"name":"a"},{"name":"b"}],"note":"n"}',
    );
    // A prototype's toJSON would write what the schema does not declare.
    class Row {
      id = 1;
      toJSON() {
        return { id: 1, salary: 100 };
      }
    }
    assert.equal(JSON.stringify(keep(new Row())), '{"id":1}');
    class Tags extends Array {
      toJSON() {
        return ['secret'];
      }
    }
    const tags = Tags.from([{ name: 'a' }]);
    assert.equal(JSON.stringify(keep({ id: 1, tags })), '{"id":1,"tags":[{"name":"a"}]}');
  });
});

describe('request validators', () => {
  it('are compiled once per process for the same schema, models and options, and never shared past them', () => {
    const options = { customOptions: { allErrors: true }, plugins: [registerQueryKeywords] };
    const route = (schema: object) => ({
      method: 'GET',
      url: '/',
      httpPart: 'querystring',
      schema,
    });
    const limit = (maximum: number) => ({
      type: 'object',
      properties: { limit: { type: 'integer', maximum } },
    });
    const first = pooledValidators({}, options)(route(limit(10)));
    assert.equal(pooledValidators({}, options)(route(limit(10))), first);
    assert.equal(first({ limit: 11 }), false);
    const wider = pooledValidators({}, options)(route(limit(100)));
    assert.notEqual(wider, first);
    assert.equal(wider({ limit: 11 }), true);
    // Other Ajv options (the admin listener's exact bodies): another instance, its own result.
    const exact = pooledValidators(
      {},
      { ...options, customOptions: { coerceTypes: false } },
    )(route(limit(10)));
    assert.notEqual(exact, first);
    assert.equal(first({ limit: '5' }), true, 'coerced');
    assert.equal(exact({ limit: '5' }), false, 'not coerced');
  });
});
