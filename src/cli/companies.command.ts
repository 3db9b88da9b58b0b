import type { Command } from 'commander';
import { requireReceiptsDir } from '../config.ts';
import { count, noteDeletedValuesInWal, parseId, print, table, withDatabase } from './context.ts';
import { COMPANIES_HELP } from './help.ts';

/** Loaded when a command runs, not for every `cdapi` (see main.ts). */
const companiesService = () => import('../services/companies.service.ts');

export function registerCompanyCommands(program: Command): void {
  const companies = program
    .command('companies')
    .description('list, activate, deactivate and purge companies')
    .addHelpText('after', COMPANIES_HELP.group);

  companies
    .command('list')
    .description('list every company')
    .addHelpText('after', COMPANIES_HELP.command.list)
    .option('--json', 'machine-readable output')
    .action(async (options: { json?: boolean }) => {
      const { listCompanies } = await companiesService();
      const rows = await withDatabase(({ handle }) => listCompanies(handle.db), { quick: true });
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
      .addHelpText('after', COMPANIES_HELP.command[name])
      .action(async (id: number, options: { json?: boolean }) => {
        const { changeCompanyStatus } = await companiesService();
        const company = await withDatabase(
          ({ handle }) => changeCompanyStatus(handle.db, id, active),
          { quick: true },
        );
        print(
          options.json,
          company,
          () => `Company ${id} (${company.name}) is now ${active ? 'active' : 'inactive'}.`,
        );
      });
  }

  companies
    .command('purge')
    .description(
      'delete the company with all its records, keys and receipt files (its keys get 401 within 2 s)',
    )
    .argument('<id>', 'company id', parseId('company id'))
    .requiredOption('--confirm <id>', 'the same company id again: nothing can bring it back')
    .option('--json', 'machine-readable output')
    .addHelpText('after', COMPANIES_HELP.command.purge)
    .action(async (id: number, options: { confirm: string; json?: boolean }) => {
      const [{ purgeConfirmedCompany }, { FileReceiptStore }] = await Promise.all([
        companiesService(),
        import('../receipts/fs-store.ts'),
      ]);
      const summary = await withDatabase(({ config, handle }) =>
        purgeConfirmedCompany(handle, new FileReceiptStore(requireReceiptsDir(config)), id, {
          field: '--confirm',
          value: options.confirm,
        }),
      );
      const { removed } = summary;
      print(options.json, summary, () =>
        [
          `Purged company ${id} (${summary.company.name}):`,
          `  ${count(removed.employees, 'employee')}, ${count(removed.leave_types, 'leave type')}, ${count(removed.leaves, 'leave')},`,
          `  ${count(removed.expense_categories, 'expense category', 'expense categories')}, ${count(removed.expenses, 'expense')},`,
          `  ${count(removed.receipt_files, 'receipt file')}, ${count(removed.api_keys, 'API key')}.`,
        ].join('\n'),
      );
      noteDeletedValuesInWal(summary, options.json);
      const left = summary.receipt_files_left;
      if (left.length > 0 && !options.json) {
        process.stderr.write(
          `cdapi: ${count(left.length, 'receipt file')} could not be removed from RECEIPTS_DIR (${left[0]?.reason}): remove by hand ${left.map((file) => file.path).join(' ')}\n`,
        );
      }
    });
}
