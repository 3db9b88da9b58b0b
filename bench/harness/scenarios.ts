import type { ScenarioParameters } from './parameters.ts';

export const SCENARIO_NAMES = [
  'me',
  'employees',
  'employees-search',
  'leaves',
  'leaves-deep',
  'leaves-quarter',
  'leaves-search',
  'expenses-filter',
  'expenses-search',
  'expense-by-id',
  'small-leaves',
  'repeated',
] as const;

export type ScenarioName = (typeof SCENARIO_NAMES)[number];

/** A page of 100 leaves: two scenarios, and the body the baseline servers answer with. */
export const LEAVES_PAGE_PATH = '/leaves?per_page=100';

export interface Scenario {
  name: ScenarioName;
  /** The path with placeholders, as reported (`/expenses/{id}`). */
  pattern: string;
  /** Which company's key sends the requests. */
  company: 'large' | 'small';
  /** Paths under the API base, sent in turn; most scenarios have one. */
  paths: string[];
}

function fixed(name: ScenarioName, path: string, company: Scenario['company'] = 'large'): Scenario {
  return { name, pattern: path, company, paths: [path] };
}

/** Every scenario, in run order; the query strings come from the data. */
export function buildScenarios(parameters: ScenarioParameters): Scenario[] {
  const { quarter } = parameters;
  const encode = encodeURIComponent;
  return [
    fixed('me', '/me'),
    fixed('employees', '/employees?per_page=25'),
    fixed('employees-search', `/employees?search=${encode(parameters.surnamePrefix)}`),
    fixed('leaves', LEAVES_PAGE_PATH),
    fixed('leaves-deep', '/leaves?per_page=100&page=10000'),
    fixed(
      'leaves-quarter',
      `/leaves?status=approved,pending&from=${quarter.from}&to=${quarter.to}`,
    ),
    fixed('leaves-search', `/leaves?search=${encode(parameters.surname)}`),
    fixed(
      'expenses-filter',
      `/expenses?category_id=${parameters.categoryId}&from=${quarter.from}&to=${quarter.to}&sort=-amount`,
    ),
    fixed('expenses-search', `/expenses?search=${encode(parameters.merchantPrefix)}`),
    {
      name: 'expense-by-id',
      pattern: '/expenses/{id}',
      company: 'large',
      paths: parameters.expenseIds.map((id) => `/expenses/${id}`),
    },
    fixed('small-leaves', '/leaves', 'small'),
    // The same URL as `leaves` again: what a response cache would serve.
    fixed('repeated', LEAVES_PAGE_PATH),
  ];
}
