import type { Command } from 'commander';
import { requireReceiptsDir } from '../config.ts';
import { DEFAULT_DEMO_EMPLOYEES } from '../demo/context.ts';
import { count, parseCount, print, withDatabase } from './context.ts';
import { DEMO_HELP } from './help.ts';

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('create a demo company with generated data and print its API key once')
    .option('--employees <n>', 'number of employees', parseCount(1, 5000), DEFAULT_DEMO_EMPLOYEES)
    .option('--json', 'print {"company_id","key_id","key","counts"}')
    .addHelpText('after', DEMO_HELP)
    .action(async (options: { employees: number; json?: boolean }) => {
      const [{ createDemoCompany }, { FileReceiptStore }] = await Promise.all([
        import('../demo/demo.ts'),
        import('../receipts/fs-store.ts'),
      ]);
      const demo = await withDatabase(
        ({ config, handle }) =>
          createDemoCompany(handle, new FileReceiptStore(requireReceiptsDir(config)), options),
        { creates: true },
      );
      const { counts } = demo.summary;
      print(
        options.json,
        { company_id: demo.companyId, key_id: demo.keyId, key: demo.key, counts },
        () =>
          [
            `Created demo company ${demo.companyId}: ${count(counts.employee, 'employee')}, ${count(counts.leave, 'leave')}, ${count(counts.expense, 'expense')}, ${count(demo.summary.receipts, 'receipt')}.`,
            'API key (shown once, store it now):',
            demo.key,
          ].join('\n'),
      );
    });
}
