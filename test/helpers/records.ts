import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { formatTimestamp } from '../../src/time.ts';

/**
 * Factories for import records in the format of docs/import-format.md. Each takes the fields a test
 * cares about and fills the rest with valid values.
 */
type Fields = Record<string, unknown>;

/**
 * Sensitive values are filled with canaries by default: every API test asserts that no
 * response it received contains one (see test/helpers/api.ts).
 */
export const CANARY = 'CANARY';
export const CANARY_SALARY = '913579.24';
export const canaries = (text: string): string[] =>
  [CANARY, CANARY_SALARY].filter((canary) => text.includes(canary));

export const company = (id: number, fields: Fields = {}) => ({
  type: 'company',
  id,
  name: `Company ${id}`,
  timezone: 'Europe/Istanbul',
  active: true,
  ...fields,
});

export const employee = (companyId: number, id: number, fields: Fields = {}) => ({
  type: 'employee',
  company_id: companyId,
  id,
  employee_number: `E-${id}`,
  first_name: 'Ayşe',
  last_name: 'Yılmaz',
  email: `e${id}@example.test`,
  department: 'Finance',
  position: 'Accountant',
  status: 'active',
  hire_date: '2020-01-15',
  national_id: `${CANARY}-NID-${id}`,
  salary: CANARY_SALARY,
  iban: `${CANARY}-IBAN-${id}`,
  address: `${CANARY} Street ${id}`,
  updated_at: '2026-02-01T08:00:00Z',
  ...fields,
});

/** The keys of an employee as the API serves it, sorted: none of the sensitive ones above. */
export const SERVED_EMPLOYEE_KEYS = [
  'department',
  'email',
  'employee_number',
  'full_name',
  'hire_date',
  'id',
  'position',
  'status',
  'updated_at',
];

export const leaveType = (companyId: number, id: number, fields: Fields = {}) => ({
  type: 'leave_type',
  company_id: companyId,
  id,
  name: 'Annual leave',
  type_key: 'annual',
  description: null,
  max_days_per_year: 14,
  quota_type: 'yearly',
  requires_document: false,
  affects_annual_balance: true,
  active: true,
  ...fields,
});

export const leave = (
  companyId: number,
  id: number,
  employeeId: number,
  leaveTypeId: number,
  fields: Fields = {},
) => ({
  type: 'leave',
  company_id: companyId,
  id,
  employee_id: employeeId,
  leave_type_id: leaveTypeId,
  status: 'approved',
  start_date: '2026-03-02',
  end_date: '2026-03-04',
  days: 3,
  duration_type: 'full_day',
  start_time: null,
  end_time: null,
  hours: null,
  reason: null,
  rejection_reason: null,
  substitute_employee_id: null,
  approved_at: '2026-02-20T08:00:00Z',
  created_at: '2026-02-19T08:00:00Z',
  updated_at: '2026-02-20T08:00:00Z',
  document: {
    deadline: null,
    obligation_status: null,
    attachments: [{ file_name: `${CANARY}-medical-${id}.pdf` }],
  },
  ...fields,
});

const DAY_MS = 86_400_000;

/**
 * `count` leaves of one company, ids 1…count, each starting on one of the 700 days from `start`
 * (ms since the epoch), lasting up to five days and created the day before it starts: in
 * `created_at` order a date window's matches bunch up at one end, where a short walk from the
 * other end meets none of them. `rng` draws the days (one seed, the same leaves).
 */
export function leavesCreatedTheDayBefore(
  companyId: number,
  employeeId: number,
  leaveTypeId: number,
  count: number,
  start: number,
  rng: () => number,
): Fields[] {
  const date = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const stamp = (ms: number) => formatTimestamp(new Date(ms));
  return Array.from({ length: count }, (_, i) => {
    const starts = start + Math.floor(rng() * 700) * DAY_MS;
    return leave(companyId, i + 1, employeeId, leaveTypeId, {
      start_date: date(starts),
      end_date: date(starts + Math.floor(rng() * 5) * DAY_MS),
      created_at: stamp(starts - DAY_MS + Math.floor(rng() * 86_400) * 1000),
      updated_at: stamp(starts),
    });
  });
}

export const category = (companyId: number, id: number, fields: Fields = {}) => ({
  type: 'expense_category',
  company_id: companyId,
  id,
  name: 'Travel',
  description: null,
  requires_receipt: true,
  max_amount: '5000.00',
  active: true,
  ...fields,
});

export const expense = (
  companyId: number,
  id: number,
  employeeId: number,
  categoryId: number,
  fields: Fields = {},
) => ({
  type: 'expense',
  company_id: companyId,
  id,
  employee_id: employeeId,
  category_id: categoryId,
  status: 'paid',
  title: 'Taxi',
  description: null,
  amount: '1250.50',
  currency: 'TRY',
  tax_amount: '225.09',
  expense_date: '2026-03-05',
  merchant_name: 'Yellow Cab',
  payment_method: 'corporate_card',
  approved_at: '2026-03-06T10:00:00Z',
  paid_at: '2026-03-10T10:00:00Z',
  rejected_reason: null,
  submitted_at: '2026-03-05T18:00:00Z',
  created_at: '2026-03-05T18:00:00Z',
  updated_at: '2026-03-10T10:00:00Z',
  items: [{ name: 'Ride', quantity: 1, price: '1250.50' }],
  receipt: null,
  ...fields,
});

/** A small company with one record of every type: ids offset by `base` to interleave companies. */
export function smallCompany(companyId: number, base: number): Fields[] {
  return [
    company(companyId),
    employee(companyId, base + 1),
    leaveType(companyId, base + 1),
    leave(companyId, base + 1, base + 1, base + 1),
    category(companyId, base + 1),
    expense(companyId, base + 1, base + 1, base + 1),
  ];
}

/** One line a record: an object as JSON, a string as it is, a Buffer as its raw bytes. */
export function ndjson(records: unknown[]): Buffer {
  return Buffer.concat(
    records.flatMap((r) => [
      Buffer.isBuffer(r) ? r : Buffer.from(typeof r === 'string' ? r : JSON.stringify(r)),
      Buffer.from('\n'),
    ]),
  );
}

export function writeNdjson(dir: string, records: unknown[], name = 'import.ndjson'): string {
  const file = join(dir, name);
  writeFileSync(file, ndjson(records));
  return file;
}

/** A real JPEG of the given size, written to dir/name. */
export async function writeJpeg(
  dir: string,
  name: string,
  width = 40,
  height = 30,
): Promise<string> {
  const bytes = await sharp({
    create: { width, height, channels: 3, background: { r: 240, g: 240, b: 230 } },
  })
    .jpeg()
    .toBuffer();
  writeFileSync(join(dir, name), bytes);
  return join(dir, name);
}
