import { type Static, Type } from 'typebox';
import { EMPLOYEE_STATUSES } from '../domain.ts';
import {
  DateString,
  model,
  PageParam,
  PerPageParam,
  SearchParam,
  SortParam,
  StatusListParam,
  Timestamp,
  UpdatedSinceParam,
} from './common.ts';

export const EMPLOYEE_SORT_FIELDS = [
  'id',
  'full_name',
  'employee_number',
  'hire_date',
  'updated_at',
] as const;

export const EmployeeSchema = model(
  'Employee',
  Type.Object(
    {
      id: Type.Integer(),
      employee_number: Type.String({ description: 'Personnel number.' }),
      full_name: Type.String(),
      email: Type.String({ format: 'email' }),
      department: Type.String(),
      position: Type.String(),
      status: Type.Enum([...EMPLOYEE_STATUSES], { type: 'string' }),
      hire_date: DateString,
      updated_at: Type.String({
        ...Timestamp,
        description:
          'When the source last changed the employee: its export’s own time, else the time of the import that changed the stored values (when it started).',
      }),
    },
    { description: 'An employee of the company; never any sensitive field.' },
  ),
);
export type Employee = Static<typeof EmployeeSchema>;

export const EmployeeListQuery = Type.Object({
  status: Type.Optional(StatusListParam(EMPLOYEE_STATUSES)),
  search: Type.Optional(
    SearchParam('Matches first name, last name, full name or personnel number.'),
  ),
  updated_since: Type.Optional(UpdatedSinceParam),
  sort: Type.Optional(SortParam(EMPLOYEE_SORT_FIELDS)),
  page: Type.Optional(PageParam),
  per_page: Type.Optional(PerPageParam),
});
export type EmployeeListQuery = Static<typeof EmployeeListQuery>;
