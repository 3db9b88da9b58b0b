import type { PerRecordType } from '../resources/index.ts';
import type { Day } from './calendar.ts';
import type { Rng } from './random.ts';

/** What the parts of the demo generator share: ids, the PRNG, "today", and record formats. */

/** The first id of each record type (`company`, `leaveType`, …); the rest follow on. */
export type DemoIds = PerRecordType<number>;

export type DemoRecord = Record<string, unknown>;

export interface Context {
  rng: Rng;
  ids: DemoIds;
  companyId: number;
  today: Day;
  /** Yesterday: every timestamp falls on or before it, so none lies in the future. */
  lastDay: Day;
}

/** The employees of a demo company unless `cdapi demo --employees` says otherwise. */
export const DEFAULT_DEMO_EMPLOYEES = 60;

/** Retired leave types and expense categories only appear on records older than this. */
export const RETIRED_BEFORE_DAYS = 180;

/** Integer cents → "1250.50"; both demo currencies use two decimals. */
export function formatCents(cents: number): string {
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}
