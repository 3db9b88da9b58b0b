import type { Context, DemoRecord } from './context.ts';
import { list } from './random.ts';

/** The demo company's leave types: what each record says, and how leaves of it are drawn. */

/** A leave type: its record's fields, and how the generator draws leaves of it. */
export interface LeaveTypeSpec {
  key: string;
  name: string;
  description: string | null;
  maxDaysPerYear: number;
  quotaType: string;
  affectsAnnualBalance: boolean;
  active: boolean;
  /** How often a demo leave is of this type. */
  weight: number;
  workdays: readonly [number, number];
  /** Reasons for whole days, and for half days and hours (none: whole days only). */
  reasons: readonly string[];
  partialReasons: readonly string[];
  /** Proof the employee must hand in; its presence makes requires_document true. */
  documentFile: string | null;
  /** Days after the start by which the document is due. */
  documentDays: number;
  bookedAhead: boolean;
  oncePerEmployee: boolean;
}

/** The demo company's leave types, in the order their ids are given. */
export const LEAVE_TYPES: readonly LeaveTypeSpec[] = [
  {
    key: 'annual',
    name: 'Annual leave',
    description: 'Paid annual leave under Labour Law No. 4857, art. 53.',
    maxDaysPerYear: 14,
    quotaType: 'yearly',
    affectsAnnualBalance: true,
    active: true,
    weight: 60,
    workdays: [1, 10],
    reasons: list(`
      Family holiday | Summer vacation in Bodrum | Visiting parents in Trabzon | Moving house |
      Skiing trip to Uludağ | Long weekend | Kurban Bayramı with family
    `),
    partialReasons: list(
      'Bank appointment | Parent-teacher meeting | Car inspection | Notary visit',
    ),
    documentFile: null,
    documentDays: 0,
    bookedAhead: true,
    oncePerEmployee: false,
  },
  {
    key: 'sick',
    name: 'Sick leave',
    description: 'Requires a medical report (rapor) from a doctor.',
    maxDaysPerYear: 40,
    quotaType: 'none',
    affectsAnnualBalance: false,
    active: true,
    weight: 24,
    workdays: [1, 5],
    reasons: list('Flu | Dental treatment | Back pain | Migraine | Minor surgery | Stomach bug'),
    partialReasons: list('Doctor appointment | Physiotherapy session | Blood test'),
    documentFile: 'medical-report.pdf',
    documentDays: 3,
    bookedAhead: false,
    oncePerEmployee: false,
  },
  {
    key: 'unpaid',
    name: 'Unpaid leave',
    description: null,
    maxDaysPerYear: 90,
    quotaType: 'per_request',
    affectsAnnualBalance: false,
    active: true,
    weight: 5,
    workdays: [3, 15],
    reasons: list('Extended travel | Caring for a family member | Personal reasons'),
    partialReasons: [],
    documentFile: null,
    documentDays: 0,
    bookedAhead: true,
    oncePerEmployee: false,
  },
  {
    key: 'parental',
    name: 'Parental leave',
    description: 'Maternity, paternity and adoption leave.',
    maxDaysPerYear: 112,
    quotaType: 'per_event',
    affectsAnnualBalance: false,
    active: true,
    weight: 1.5,
    workdays: [5, 80],
    reasons: list('Birth of our child | Adoption'),
    partialReasons: [],
    documentFile: 'birth-certificate.pdf',
    documentDays: 30,
    bookedAhead: true,
    oncePerEmployee: true,
  },
  {
    key: 'marriage',
    name: 'Marriage leave',
    description: null,
    maxDaysPerYear: 3,
    quotaType: 'per_event',
    affectsAnnualBalance: false,
    active: true,
    weight: 1.5,
    workdays: [3, 3],
    reasons: list('Our wedding | Wedding ceremony in Antalya'),
    partialReasons: [],
    documentFile: 'marriage-certificate.pdf',
    documentDays: 14,
    bookedAhead: true,
    oncePerEmployee: true,
  },
  {
    // Retired half a year ago: only old leaves use it, as in a real system.
    key: 'compensatory',
    name: 'Compensatory time off (retired)',
    description: 'Replaced by overtime pay; kept for history.',
    maxDaysPerYear: 10,
    quotaType: 'per_request',
    affectsAnnualBalance: false,
    active: false,
    weight: 4,
    workdays: [1, 2],
    reasons: list('Overtime during the year-end release | Weekend on-call duty'),
    partialReasons: [],
    documentFile: null,
    documentDays: 0,
    bookedAhead: false,
    oncePerEmployee: false,
  },
];

export function leaveTypeRecords(ctx: Context, firstId: number): DemoRecord[] {
  return LEAVE_TYPES.map((spec, i) => ({
    type: 'leave_type',
    company_id: ctx.companyId,
    id: firstId + i,
    name: spec.name,
    type_key: spec.key,
    description: spec.description,
    max_days_per_year: spec.maxDaysPerYear,
    quota_type: spec.quotaType,
    requires_document: spec.documentFile !== null,
    affects_annual_balance: spec.affectsAnnualBalance,
    active: spec.active,
  }));
}
