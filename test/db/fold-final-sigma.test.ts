import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Migrator } from 'kysely';
import { refreshExpenseTexts } from '../../src/db/expense-texts.ts';
import { migrateToLatest, migrationProvider } from '../../src/db/migrate.ts';
import { useApi } from '../helpers/api.ts';
import { companyVersions, describeEachDialect } from '../helpers/databases.ts';
import { employee, expense, smallCompany } from '../helpers/records.ts';

/** What folding gave before migration 0018: a capital Σ at a word's end became ς. */
const foldedBefore = (text: string) =>
  text.normalize('NFKD').replace(/\p{M}/gu, '').replace(/ı/g, 'i').toLowerCase();

describeEachDialect('migration 0018 (the final sigma folded to σ)', (dialect) => {
  it('folds the stored texts again, counts their searched expense texts again and gives their companies a new version', async (t) => {
    const api = await useApi(t, dialect, {
      records: [
        ...smallCompany(1, 0),
        ...smallCompany(2, 100),
        employee(1, 50, { first_name: 'ΟΔΥΣΣΕΥΣ', last_name: 'Παπαδόπουλος' }),
        expense(1, 50, 1, 1, { title: 'Ταξί', merchant_name: 'ΤΑΒΕΡΝΑ ΟΔΥΣΣΕΑΣ' }),
        expense(1, 51, 1, 1, { title: 'Ταξί', merchant_name: 'Ταβέρνα Οδυσσέας' }),
      ],
    });
    const { db } = api.handle;
    const key = await api.createKey(1);
    const found = async (path: string) =>
      (await api.get(path, key)).json.data.map((row: { id: number }) => row.id);

    // The database as the earlier folding left it.
    const { error } = await new Migrator({ db, provider: migrationProvider }).migrateTo(
      '0017_purged_companies',
    );
    assert.equal(error, undefined);
    await db
      .updateTable('employees')
      .set({ name_folded: foldedBefore('ΟΔΥΣΣΕΥΣ Παπαδόπουλος') })
      .where('id', '=', 50)
      .execute();
    await db
      .updateTable('expenses')
      .set({ merchant_folded: foldedBefore('ΤΑΒΕΡΝΑ ΟΔΥΣΣΕΑΣ') })
      .where('id', '=', 50)
      .execute();
    await refreshExpenseTexts(db, [1]);
    const before = await companyVersions(db);

    assert.equal((await migrateToLatest(db)).applied[0], '0018_fold_final_sigma');
    const folded = await db
      .selectFrom('employees')
      .select('name_folded')
      .where('id', '=', 50)
      .executeTakeFirstOrThrow();
    assert.equal(folded.name_folded, 'οδυσσευσ παπαδοπουλοσ');
    // The two spellings of the merchant are one text now, counted once with both expenses.
    const texts = await db
      .selectFrom('expense_texts')
      .select(['merchant_folded', 'expenses'])
      .where('company_id', '=', 1)
      .where('merchant_folded', 'like', 'ταβ%')
      .execute();
    assert.deepEqual(
      texts.map((row) => [row.merchant_folded, Number(row.expenses)]),
      [['ταβερνα οδυσσεασ', 2]],
    );
    const after = await companyVersions(db);
    assert.ok((after.get(1) ?? 0) > (before.get(1) ?? 0), 'company 1 has a new version');
    assert.equal(after.get(2), before.get(2), 'company 2 held no ς');

    assert.deepEqual(await found('/employees?search=%CE%9F%CE%94%CE%A5%CE%A3'), [50]);
    assert.deepEqual(await found('/expenses?search=ΟΔΥΣ'), [50, 51]);
    assert.equal((await api.get('/expenses?search=οδυσσεασ', key)).json.meta.total, 2);
  });
});
