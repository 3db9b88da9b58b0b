import { type Day, isoDate } from '../../src/demo/calendar.ts';
import { type Context, type DemoRecord, formatCents } from '../../src/demo/context.ts';
import {
  DEPARTMENTS as DEMO_DEPARTMENTS,
  emailPart,
  nationalId,
  turkishIban,
} from '../../src/demo/people.ts';
import { chance, int, list, pick, type Rng, weighted, weightedKey } from '../../src/demo/random.ts';
import type { EmployeeStatus } from '../../src/domain.ts';
import { ORIGIN_WEIGHTS } from './origins.ts';
import { FIRST_DAY, LAST_DAY } from './period.ts';

/**
 * Bench employees: departments with positions and salaries, fake but well-formed sensitive
 * fields (made as the demo makes them, src/demo/people.ts), and the stretch of the period each
 * employee worked, which their leaves and expenses fill.
 */

export interface BenchEmployee {
  id: number;
  hireDay: Day;
  /** The days this employee's leaves and expenses fall on. */
  from: Day;
  to: Day;
}

/**
 * The positions the bench's departments have: fewer than the demo's, because the bench data
 * stays byte for byte what docs/performance.md was measured on.
 */
const POSITIONS = new Set(
  list(`
    Software Engineer | Senior Software Engineer | QA Engineer | Engineering Manager |
    Sales Representative | Account Executive | Sales Director |
    Operations Specialist | Logistics Coordinator | Operations Manager |
    Support Agent | Customer Success Manager |
    Accountant | Financial Analyst | Finance Manager |
    Marketing Specialist | Brand Manager |
    HR Specialist | HR Manager
  `),
);

const DEPARTMENTS = DEMO_DEPARTMENTS.map((department) => ({
  ...department,
  positions: department.positions.filter(([title]) => POSITIONS.has(title)),
}));

const DEPARTMENT_WEIGHTS = DEPARTMENTS.map((d) => [d, d.weight] as const);

/**
 * Namesakes get a number: ayse.yilmaz, ayse.yilmaz2, … A name never ends in a digit, so a
 * numbered address cannot collide with a plain one.
 */
export class EmailBook {
  private readonly seen = new Map<string, number>();
  private readonly domain: string;

  constructor(domain: string) {
    this.domain = domain;
  }

  address(first: string, last: string): string {
    const base = `${emailPart(first)}.${emailPart(last)}`;
    const count = (this.seen.get(base) ?? 0) + 1;
    this.seen.set(base, count);
    return `${count === 1 ? base : `${base}${count}`}@${this.domain}`;
  }
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
  const department = weighted(rng, DEPARTMENT_WEIGHTS);
  const [position, , minSalary, maxSalary] = weighted(
    rng,
    department.positions.map((p) => [p, p[1]] as const),
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
      department: department.name,
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
