import type { Command } from 'commander';
import { requireReceiptsDir } from '../config.ts';
import { createDemoCompany, DEFAULT_DEMO_EMPLOYEES } from '../demo/demo.ts';
import { FileReceiptStore } from '../receipts/fs-store.ts';
import { count, parseCount, print, withDatabase } from './context.ts';

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('create a demo company with generated data and print its API key once')
    .option('--employees <n>', 'number of employees', parseCount(1, 5000), DEFAULT_DEMO_EMPLOYEES)
    .option('--json', 'print {"company_id","key_id","key","counts"}')
    .action(async (options: { employees: number; json?: boolean }) => {
      const demo = await withDatabase(({ config, handle }) =>
        createDemoCompany(handle, new FileReceiptStore(requireReceiptsDir(config)), options),
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
