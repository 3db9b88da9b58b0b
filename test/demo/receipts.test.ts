import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createDemoCompany } from '../../src/demo/demo.ts';
import { demoRecords } from '../../src/demo/generate.ts';
import {
  type ReceiptExpense,
  receiptSvg,
  writeExpenseReceipt,
} from '../../src/demo/receipt-images.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { useDatabase, useTempDir } from '../helpers/databases.ts';

const TODAY = new Date('2026-06-01T12:00:00Z');
const IDS = { company: 1, employee: 1, leaveType: 1, leave: 1, expenseCategory: 1, expense: 1 };

function receiptedExpenses(employees: number, receipts: number): ReceiptExpense[] {
  return [...demoRecords({ ids: IDS, employees, today: TODAY, receipts })].filter(
    (r) => r.type === 'expense' && r.receipt !== null,
  ) as unknown as ReceiptExpense[];
}

/** The slip's text, line by line, as a reader of the image would see it. */
function slipText(svg: string): string[] {
  return [...svg.matchAll(/<text [^>]*>([^<]*)<\/text>/g)].map((m) =>
    (m[1] as string).replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code))),
  );
}

/** `"8522.10"` as the slip prints it: `8.522,10`. */
const printed = (decimal: string) => {
  const [whole = '', fraction = ''] = decimal.split('.');
  return `${Number(whole).toLocaleString('de-DE')},${fraction.padEnd(2, '0')}`;
};

describe('demo receipts', () => {
  it('are drawn from their own expense: merchant, date, items, tax, total and currency', () => {
    const expenses = receiptedExpenses(30, 12);
    assert.equal(expenses.length, 12);
    assert.ok(new Set(expenses.map((e) => e.currency)).size > 1, 'lira and euro slips');
    for (const expense of expenses) {
      const lines = slipText(receiptSvg(expense));
      const turkish = expense.currency === 'TRY';
      const upper = (text: string) => text.toLocaleUpperCase(turkish ? 'tr-TR' : 'en');
      const [year, month, day] = expense.expense_date.split('-');
      assert.equal(lines[0], upper(expense.merchant_name));
      assert.ok(
        lines.includes(`${turkish ? 'TARİH' : 'DATE'}: ${day}.${month}.${year}`),
        lines.join('|'),
      );
      for (const item of expense.items) {
        assert.equal(item.quantity, 1);
        const at = lines.indexOf(upper(item.name));
        assert.ok(at >= 0, `${item.name} in ${lines.join('|')}`);
        assert.equal(lines[at + 1], printed(item.price));
      }
      const total = turkish
        ? `*${printed(expense.amount)} TL`
        : `${printed(expense.amount)} ${expense.currency}`;
      assert.equal(lines[lines.indexOf(turkish ? 'TOPLAM' : 'TOTAL') + 1], total);
      assert.equal(
        lines[lines.indexOf(turkish ? 'TOPKDV' : 'INCL. VAT') + 1],
        printed(expense.tax_amount),
      );
    }
  });

  it("start at the company's first expense, whatever day the demo is made on (the README asks for expense 1)", () => {
    const days = 2 * 366;
    const without: string[] = [];
    for (let n = 0; n < days; n++) {
      const today = new Date(Date.UTC(2026, 0, 1 + n, 12));
      const first = [
        ...demoRecords({ ids: IDS, employees: 1 + (n % 60), today, receipts: 1 }),
      ].find((r) => r.type === 'expense');
      assert.equal(first?.id, IDS.expense);
      if (first.receipt === null) without.push(today.toISOString().slice(0, 10));
    }
    assert.deepEqual(without, []);
  });

  it('are what the demo stores for each expense, one slip each', async (t) => {
    const { handle } = await useDatabase(t, 'sqlite');
    const dir = useTempDir(t);
    await createDemoCompany(handle, new FileReceiptStore(join(dir, 'store')), {
      employees: 8,
      today: TODAY,
    });
    const stored = await handle.db
      .selectFrom('receipts')
      .select(['expense_id', 'original_sha256', 'original_key'])
      .orderBy('expense_id')
      .execute();
    const expenses = receiptedExpenses(8, 4);
    assert.deepEqual(
      stored.map((r) => r.expense_id),
      expenses.map((e) => e.id),
    );
    const drawn = useTempDir(t);
    for (const [i, expense] of expenses.entries()) {
      const file = await writeExpenseReceipt(drawn, expense, i % 2 === 0);
      const sha256 = createHash('sha256')
        .update(readFileSync(join(drawn, file)))
        .digest('hex');
      assert.equal(stored[i]?.original_sha256, sha256, `expense ${expense.id}`);
    }
    assert.equal(new Set(stored.map((r) => r.original_sha256)).size, 4);
  });
});
