import { DAY_MS, formatTimestamp } from '../time.ts';
import { int, type Rng } from './random.ts';

/**
 * Calendar: whole UTC days since 1970-01-01, so arithmetic can never produce a date that does
 * not exist, and times are minutes added to a day.
 */

export type Day = number;
const MINUTE_MS = 60_000;

export const dayOf = (date: Date): Day => Math.floor(date.getTime() / DAY_MS);
export const isoDate = (day: Day): string => new Date(day * DAY_MS).toISOString().slice(0, 10);
export const timestamp = (ms: number): string => formatTimestamp(new Date(ms));

function isWeekend(day: Day): boolean {
  const weekday = new Date(day * DAY_MS).getUTCDay();
  return weekday === 0 || weekday === 6;
}

export function nextWorkday(day: Day): Day {
  let result = day;
  while (isWeekend(result)) result++;
  return result;
}

/** The last day of `count` workdays that start on the workday `start`. */
export function addWorkdays(start: Day, count: number): Day {
  let day = start;
  for (let left = count - 1; left > 0; left--) day = nextWorkday(day + 1);
  return day;
}

export function workdaysBetween(start: Day, end: Day): number {
  let count = 0;
  for (let day = start; day <= end; day++) if (!isWeekend(day)) count++;
  return count;
}

/** A moment in office hours (09:00–18:00 in Istanbul, 06:00–15:00 UTC) on `day`, in ms. */
export function officeMoment(rng: Rng, day: Day): number {
  return day * DAY_MS + (6 * 60 + int(rng, 0, 9 * 60 - 1)) * MINUTE_MS;
}

/**
 * A moment some days after `fromMs` but never after `lastDay`, and always at least a quarter
 * of an hour after `fromMs`, so created ≤ approved ≤ paid holds even when the clamp bites.
 */
export function later(
  rng: Rng,
  fromMs: number,
  minDays: number,
  maxDays: number,
  lastDay: Day,
): number {
  const day = Math.min(Math.floor(fromMs / DAY_MS) + int(rng, minDays, maxDays), lastDay);
  return Math.max(officeMoment(rng, day), fromMs + 15 * MINUTE_MS);
}

export const clamp = (value: number, min: number, max: number): number =>
  Math.min(Math.max(value, min), max);

/** Minutes since midnight → "HH:MM". */
export function clockTime(minutes: number): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`;
}
