import type { NewEmployee } from '../db/database.ts';
import { EMPLOYEE_STATUSES } from '../domain.ts';
import { fold } from '../fold.ts';
import { EMPLOYEE_SORT_FIELDS } from '../schemas/employees.ts';
import { type FieldReader, LONG_TEXT_MAX } from './fields.ts';
import { recordType } from './record-type.ts';

function parseEmployee(r: FieldReader): { row: NewEmployee } {
  const firstName = r.text('first_name');
  const lastName = r.text('last_name');
  const employeeNumber = r.text('employee_number', 50);
  const fullName = `${firstName} ${lastName}`;
  return {
    row: {
      id: r.id('id'),
      company_id: r.id('company_id'),
      employee_number: employeeNumber,
      first_name: firstName,
      last_name: lastName,
      full_name: fullName,
      email: r.email('email'),
      department: r.text('department'),
      position: r.text('position'),
      status: r.oneOf('status', EMPLOYEE_STATUSES),
      hire_date: r.date('hire_date'),
      national_id: r.optionalText('national_id', 64),
      salary_e4: r.optionalMoney('salary'),
      iban: r.optionalText('iban', 64),
      address: r.optionalText('address', LONG_TEXT_MAX),
      name_folded: fold(fullName),
      number_folded: fold(employeeNumber),
      // Null: the importer writes the import's time.
      updated_at: r.optionalTimestamp('updated_at'),
    },
  };
}

export const employee = recordType({
  type: 'employee',
  table: 'employees',
  noun: ['employee', 'employees'],
  embedded: ['employee_number', 'full_name', 'department'],
  unserved: ['national_id', 'salary_e4', 'iban', 'address'],
  parents: [],
  children: [],
  receipt: false,
  list: { sortFields: EMPLOYEE_SORT_FIELDS, sampled: null },
  parse: parseEmployee,
});
