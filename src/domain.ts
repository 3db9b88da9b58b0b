/** The closed vocabularies of the data, shared by the importer, the tables and the API schemas. */
export const EMPLOYEE_STATUSES = ['active', 'inactive', 'terminated'] as const;
export const LEAVE_STATUSES = ['pending', 'approved', 'rejected', 'cancelled'] as const;
export const EXPENSE_STATUSES = ['pending', 'approved', 'rejected', 'paid', 'cancelled'] as const;
export const DURATION_TYPES = ['full_day', 'half_day', 'hourly'] as const;

export type EmployeeStatus = (typeof EMPLOYEE_STATUSES)[number];
export type LeaveStatus = (typeof LEAVE_STATUSES)[number];
export type ExpenseStatus = (typeof EXPENSE_STATUSES)[number];
export type DurationType = (typeof DURATION_TYPES)[number];
