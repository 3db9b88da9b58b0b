import { type Day, isoDate } from '../../src/demo/calendar.ts';
import { type Context, type DemoRecord, formatCents } from '../../src/demo/context.ts';
import {
  chance,
  digits,
  int,
  pick,
  type Rng,
  weighted,
  weightedKey,
} from '../../src/demo/random.ts';
import type { EmployeeStatus } from '../../src/domain.ts';
import { fold } from '../../src/fold.ts';
import { ORIGIN_WEIGHTS } from './origins.ts';
import { FIRST_DAY, LAST_DAY } from './period.ts';

/**
 * Bench employees: departments with positions and salaries, fake but well-formed sensitive
 * fields, and the stretch of the period each employee worked, which their leaves and expenses
 * fill. The department list and the identity-number and IBAN makers are copied from
 * src/demo/people.ts, which does not export them.
 */

export interface BenchEmployee {
  id: number;
  hireDay: Day;
  /** The days this employee's leaves and expenses fall on. */
  from: Day;
  to: Day;
}

/** Title, relative weight, monthly gross salary range in TRY. */
type Position = readonly [string, number, number, number];

const DEPARTMENTS: readonly (readonly [string, number, readonly Position[]])[] = [
  [
    'Engineering',
    28,
    [
      ['Software Engineer', 10, 55_000, 90_000],
      ['Senior Software Engineer', 6, 85_000, 130_000],
      ['QA Engineer', 3, 45_000, 70_000],
      ['Engineering Manager', 1, 120_000, 170_000],
    ],
  ],
  [
    'Sales',
    18,
    [
      ['Sales Representative', 6, 32_000, 50_000],
      ['Account Executive', 5, 40_000, 65_000],
      ['Sales Director', 1, 110_000, 160_000],
    ],
  ],
  [
    'Operations',
    14,
    [
      ['Operations Specialist', 5, 35_000, 50_000],
      ['Logistics Coordinator', 3, 35_000, 50_000],
      ['Operations Manager', 1, 80_000, 110_000],
    ],
  ],
  [
    'Support',
    13,
    [
      ['Support Agent', 6, 28_000, 38_000],
      ['Customer Success Manager', 2, 50_000, 75_000],
    ],
  ],
  [
    'Finance',
    10,
    [
      ['Accountant', 4, 38_000, 55_000],
      ['Financial Analyst', 2, 45_000, 70_000],
      ['Finance Manager', 1, 85_000, 120_000],
    ],
  ],
  [
    'Marketing',
    10,
    [
      ['Marketing Specialist', 4, 38_000, 55_000],
      ['Brand Manager', 1, 70_000, 100_000],
    ],
  ],
  [
    'HR',
    7,
    [
      ['HR Specialist', 3, 38_000, 55_000],
      ['HR Manager', 1, 85_000, 115_000],
    ],
  ],
];

const DEPARTMENT_WEIGHTS = DEPARTMENTS.map((d) => [d, d[1]] as const);

/** An ASCII e-mail local part: fold() strips accents and ı; spell out what it leaves alone. */
function emailPart(name: string): string {
  return fold(name)
    .replace(/ß/g, 'ss')
    .replace(/ł/g, 'l')
    .replace(/['’]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/**
 * Namesakes get a number: ayse.yilmaz, ayse.yilmaz2, … A name never ends in a digit, so a
 * numbered address cannot collide with a plain one.
 */
export class EmailBook {
  private readonly seen = new Map<string, number>();
  constructor(private readonly domain: string) {}

  address(first: string, last: string): string {
    const base = `${emailPart(first)}.${emailPart(last)}`;
    const count = (this.seen.get(base) ?? 0) + 1;
    this.seen.set(base, count);
    return `${count === 1 ? base : `${base}${count}`}@${this.domain}`;
  }
}

/** A Turkish identity number with valid check digits; foreign residents' start with 99. */
function nationalId(rng: Rng, foreign: boolean): string {
  const head = foreign ? `99${digits(rng, 7)}` : `${int(rng, 1, 9)}${digits(rng, 8)}`;
  const d = [...head].map(Number);
  const odd = d.reduce((sum, v, i) => (i % 2 === 0 ? sum + v : sum), 0);
  const even = d.reduce((sum, v, i) => (i % 2 === 1 ? sum + v : sum), 0);
  const tenth = (((odd * 7 - even) % 10) + 10) % 10;
  const eleventh = (d.reduce((sum, v) => sum + v, 0) + tenth) % 10;
  return `${head}${tenth}${eleventh}`;
}

/** A Turkish IBAN (TR + 24 digits) at a real bank code, with valid ISO 7064 check digits. */
function turkishIban(rng: Rng): string {
  const bank = pick(rng, ['00010', '00012', '00015', '00046', '00062', '00064', '00067', '00111']);
  const bban = `${bank}0${digits(rng, 16)}`;
  // "TR00" moved to the end, letters as numbers (T = 29, R = 27), per ISO 13616.
  const check = 98 - Number(BigInt(`${bban}292700`) % 97n);
  return `TR${String(check).padStart(2, '0')}${bban}`;
}

/**
 * When the employee was hired and the days they worked in the period. A quarter joined before
 * it, so their history fills all ten years; leavers left somewhere after their first month.
 */
function tenure(rng: Rng, status: EmployeeStatus): Omit<BenchEmployee, 'id'> {
  const hireDay = chance(rng, 0.25)
    ? int(rng, FIRST_DAY - 3650, FIRST_DAY - 1)
    : int(rng, FIRST_DAY, LAST_DAY - 30);
  const from = Math.max(hireDay + 14, FIRST_DAY);
  const to = status === 'active' ? LAST_DAY : int(rng, Math.min(from + 30, LAST_DAY), LAST_DAY);
  return { hireDay, from, to };
}

export function makeEmployee(
  ctx: Context,
  index: number,
  emails: EmailBook,
): { employee: BenchEmployee; record: DemoRecord } {
  const { rng } = ctx;
  const id = ctx.ids.employee + index;
  const origin = weighted(rng, ORIGIN_WEIGHTS);
  const firstName = pick(rng, origin.firstNames);
  const lastName = pick(rng, origin.lastNames);
  const [department, , positions] = weighted(rng, DEPARTMENT_WEIGHTS);
  const [position, , minSalary, maxSalary] = weighted(
    rng,
    positions.map((p) => [p, p[1]] as const),
  );
  const status = weightedKey<EmployeeStatus>(rng, { active: 85, inactive: 8, terminated: 7 });
  const worked = tenure(rng, status);
  const salaryHundreds = int(rng, minSalary / 100, maxSalary / 100);
  return {
    employee: { id, ...worked },
    record: {
      type: 'employee',
      company_id: ctx.companyId,
      id,
      employee_number: `E-${String(index + 1).padStart(5, '0')}`,
      first_name: firstName,
      last_name: lastName,
      email: emails.address(firstName, lastName),
      department,
      position,
      status,
      hire_date: isoDate(worked.hireDay),
      national_id: nationalId(rng, origin.foreign),
      salary: formatCents(salaryHundreds * 100 * 100),
      iban: turkishIban(rng),
      address: origin.address(rng),
    },
  };
}
