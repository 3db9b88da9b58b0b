import type { Command } from 'commander';
import { changeCompanyStatus, listCompanies } from '../services/companies.service.ts';
import { parseId, print, table, withDatabase } from './context.ts';

export function registerCompanyCommands(program: Command): void {
  const companies = program
    .command('companies')
    .description('list, activate and deactivate companies');

  companies
    .command('list')
    .description('list every company')
    .option('--json', 'machine-readable output')
    .action(async (options: { json?: boolean }) => {
      const rows = await withDatabase(({ handle }) => listCompanies(handle.db));
      print(options.json, rows, () =>
        table(
          ['ID', 'NAME', 'TIMEZONE', 'ACTIVE'],
          rows.map((c) => [c.id, c.name, c.timezone, c.active ? 'yes' : 'no']),
        ),
      );
    });

  for (const [name, active] of [
    ['activate', true],
    ['deactivate', false],
  ] as const) {
    companies
      .command(name)
      .description(
        active
          ? 'let the company’s keys read data again'
          : 'refuse the company’s keys with 403 company_inactive (within 2 s on a running service)',
      )
      .argument('<id>', 'company id', parseId('company id'))
      .option('--json', 'machine-readable output')
      .action(async (id: number, options: { json?: boolean }) => {
        const company = await withDatabase(({ handle }) =>
          changeCompanyStatus(handle.db, id, active),
        );
        print(
          options.json,
          company,
          () => `Company ${id} (${company.name}) is now ${active ? 'active' : 'inactive'}.`,
        );
      });
  }
}
