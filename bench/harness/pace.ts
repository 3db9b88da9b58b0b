import { hash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { median } from '../soak/intervals.ts';

/**
 * The machine's pace: a fixed piece of the work the service and the import do, timed on one
 * thread before anything else runs, so that figures from different machines can be compared.
 * The same code has run up to three times slower on some session machines than on others
 * (docs/performance.md); a run's figures read beside its pace say whether the code or the
 * machine moved. Lower is faster.
 */
export interface MachinePace {
  /** A list page's answer made and read back, as the service makes each one (median of three). */
  javascriptMs: number;
  /** Rows inserted, indexed and walked block by block, as the import's samples walk them. */
  sqliteMs: number;
}

const RUNS = 3;
const PAGES = 400;
const ROWS = 200_000;
const BLOCK = 1000;

/** Names as the bench data has them: two-byte strings, as the service's answers are. */
const NAMES = [
  'Ayşe Yılmaz',
  'Jürgen Müller',
  'Sébastien Lefèvre',
  'Íñigo Muñoz',
  'Ahmed Al-Sayed',
];

/** A page of 100 leaves shaped as the service answers them, the same every time. */
function leavePage(): object {
  const data = Array.from({ length: 100 }, (_, i) => ({
    id: 500_000 + i,
    status: ['approved', 'pending', 'rejected', 'cancelled'][i % 4],
    employee: {
      id: 1000 + i,
      employee_number: `E-${String(1000 + i).padStart(5, '0')}`,
      full_name: NAMES[i % NAMES.length],
      department: 'Operations',
    },
    leave_type: { id: 1 + (i % 6), name: 'Annual leave', type_key: 'annual' },
    start_date: `2024-0${1 + (i % 9)}-1${i % 10}`,
    end_date: `2024-0${1 + (i % 9)}-2${i % 10}`,
    days: 1 + (i % 10),
    duration_type: 'full_day',
    start_time: null,
    end_time: null,
    hours: null,
    reason: 'Family visit',
    rejection_reason: null,
    substitute_employee: null,
    approved_at: '2024-01-02T09:30:00Z',
    created_at: '2024-01-01T08:00:00Z',
    updated_at: '2024-01-02T09:30:00Z',
  }));
  return { data, meta: { current_page: 7, per_page: 100, total: 1_000_000, last_page: 10_000 } };
}

/** Serialised, encoded, tagged, gzipped at the service's level and parsed, PAGES times. */
function javascriptWork(scale: number): number {
  const page = leavePage();
  let checksum = 0;
  for (let i = 0; i < PAGES * scale; i++) {
    const text = JSON.stringify(page);
    const body = Buffer.from(text);
    checksum += hash('sha1', body, 'buffer')[0] as number;
    checksum += gzipSync(body, { level: 3 }).length;
    checksum += (JSON.parse(text) as { data: unknown[] }).data.length;
  }
  return checksum;
}

/** A table filled in one transaction, indexed after, and walked by keyset in blocks. */
function sqliteWork(scale: number): number {
  const db = new Database(':memory:');
  try {
    db.exec(
      'create table t (id integer primary key, day text not null, status text not null, grp integer not null)',
    );
    const insert = db.prepare('insert into t values (?, ?, ?, ?)');
    const rows = Math.round(ROWS * scale);
    db.transaction(() => {
      for (let id = 1; id <= rows; id++) {
        const day = `20${10 + (id % 15)}-0${1 + (id % 9)}-1${id % 10}`;
        insert.run(id, day, ['approved', 'pending', 'rejected'][id % 3], id % 7);
      }
    })();
    db.exec('create index t_day on t (day, id, status, grp)');
    const first = db
      .prepare(`select day, id, status, grp from t order by day, id limit ${BLOCK}`)
      .raw();
    const next = db
      .prepare(
        `select day, id, status, grp from t where (day, id) > (?, ?) order by day, id limit ${BLOCK}`,
      )
      .raw();
    let checksum = 0;
    let last: unknown[] | null = null;
    for (;;) {
      const block = (last ? next.all(last[0], last[1]) : first.all()) as unknown[][];
      for (const row of block) checksum += (row[3] as number) + (row[2] as string).length;
      if (block.length < BLOCK) return checksum;
      last = block[block.length - 1] as unknown[];
    }
  } finally {
    db.close();
  }
}

function medianMs(work: (scale: number) => number, scale: number): number {
  const times: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const start = performance.now();
    if (!(work(scale) > 0)) throw new Error('the reference work computed nothing');
    times.push(performance.now() - start);
  }
  return median(times) as number;
}

/** The machine's pace; `scale` shrinks the work (tests), 1 is the benchmark's. */
export function measurePace(scale = 1): MachinePace {
  return {
    javascriptMs: Math.round(medianMs(javascriptWork, scale)),
    sqliteMs: Math.round(medianMs(sqliteWork, scale)),
  };
}

export const formatPace = (pace: MachinePace): string =>
  `machine pace (bench/harness/pace.ts, lower is faster): JavaScript ${pace.javascriptMs} ms, SQLite ${pace.sqliteMs} ms`;
