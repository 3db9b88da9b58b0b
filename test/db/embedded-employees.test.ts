import assert from 'node:assert/strict';
import { join } from 'node:path';
import { it, type TestContext } from 'node:test';
import type { Dialect } from '../../src/db/connect.ts';
import { EmployeeDirectories, embeddedEmployees } from '../../src/db/embedded-employees.ts';
import { importFile } from '../../src/import/importer.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { describeEachDialect, useDatabase, useTempDir } from '../helpers/databases.ts';
import { loggedListSource } from '../helpers/list-source.ts';
import { company, employee, writeNdjson } from '../helpers/records.ts';

/** Company 1 with employees 1–5 and company 2 with 11–13, read through a logged handle. */
async function twoCompanies(t: TestContext, dialect: Dialect) {
  const { handle } = await useDatabase(t, dialect);
  const dir = useTempDir(t);
  const store = new FileReceiptStore(join(dir, 'store'));
  const records = [
    company(1),
    ...[1, 2, 3, 4, 5].map((id) => employee(1, id, { last_name: `Number${id}` })),
    company(2),
    ...[11, 12, 13].map((id) => employee(2, id)),
  ];
  await importFile(handle, store, writeNdjson(dir, records));
  const { source, statements } = loggedListSource(
    handle.dialect === 'sqlite' ? handle.sqlite : handle.pool,
  );
  const importMore = (more: unknown[]) =>
    importFile(handle, store, writeNdjson(dir, more, 'more.ndjson'));
  return { db: source.db, statements, importMore };
}

describeEachDialect('employee directories', (dialect) => {
  it('read a company once per data version, in the background, its own employees only', async (t) => {
    const { db, statements } = await twoCompanies(t, dialect);
    const directories = new EmployeeDirectories();
    const company1 = { companyId: 1, version: 1 };
    // The first page looks its employees up by key while the company's are read for the next.
    const first = await embeddedEmployees(db, directories, company1, [1, 2, null, 2]);
    assert.deepEqual([...first.keys()].sort(), [1, 2]);
    // Exactly the embedded fields: no sensitive column is read.
    assert.deepEqual(first.get(2), {
      id: 2,
      employee_number: 'E-2',
      full_name: 'Ayşe Number2',
      department: 'Finance',
    });
    await directories.settled();
    assert.equal(statements.length, 2, 'one look-up by key, one read of the company');
    assert.equal(directories.heldEmployees(), 5);
    const more = await embeddedEmployees(db, directories, company1, [3, 5]);
    assert.deepEqual([...more.keys()], [3, 5]);
    assert.deepEqual(more.get(5)?.full_name, 'Ayşe Number5');
    assert.equal(statements.length, 2, 'answered from the directory');
    // Another company's ids are not among a company's employees, whatever is held.
    await embeddedEmployees(db, directories, { companyId: 2, version: 1 }, [11]);
    await directories.settled();
    const before = statements.length;
    const other = await embeddedEmployees(db, directories, { companyId: 2, version: 1 }, [1, 11]);
    assert.deepEqual([...other.keys()], [11]);
    assert.equal(statements.length, before + 1, 'id 1 looked up by key in company 2, not found');
    // A newer version reads the company again and replaces the older one.
    await embeddedEmployees(db, directories, { companyId: 1, version: 2 }, [1]);
    await directories.settled();
    assert.equal(directories.heldEmployees(), 8);
    const held = statements.length;
    await embeddedEmployees(db, directories, { companyId: 1, version: 2 }, [4]);
    assert.equal(statements.length, held, 'version 2 is held');
    // A request that read an older version than the one held looks its employees up by key.
    const older = await embeddedEmployees(db, directories, company1, [4]);
    assert.deepEqual([...older.keys()], [4]);
    assert.equal(statements.length, held + 1);
  });

  it('read a large company a thousand employees a statement', async (t) => {
    const { db, statements, importMore } = await twoCompanies(t, dialect);
    await importMore(Array.from({ length: 2495 }, (_, i) => employee(1, 100 + i)));
    const directories = new EmployeeDirectories();
    await embeddedEmployees(db, directories, { companyId: 1, version: 1 }, []);
    await directories.settled();
    assert.equal(directories.heldEmployees(), 2500);
    assert.equal(statements.length, 3);
    const found = await embeddedEmployees(
      db,
      directories,
      { companyId: 1, version: 1 },
      [1, 1099, 2594],
    );
    assert.deepEqual([...found.keys()], [1, 1099, 2594]);
    assert.equal(statements.length, 3, 'all from the directory');
  });

  it('start no read once closed, and end the reads under way', async (t) => {
    const { db, statements } = await twoCompanies(t, dialect);
    const directories = new EmployeeDirectories();
    // Version 2 replaces version 1 while its read is under way: closing waits for both reads.
    await embeddedEmployees(db, directories, { companyId: 1, version: 1 }, []);
    await embeddedEmployees(db, directories, { companyId: 1, version: 2 }, []);
    await directories.close();
    assert.equal(statements.length, 2, 'both reads ended');
    assert.equal(directories.heldEmployees(), 0, 'a read the close ended holds nothing');
    const before = statements.length;
    const found = await embeddedEmployees(db, directories, { companyId: 2, version: 1 }, [11]);
    assert.deepEqual([...found.keys()], [11]);
    await directories.settled();
    assert.equal(statements.length, before + 1, 'looked up by key, and company 2 not read');
  });

  it('look up by key the employees a page names that its version did not have', async (t) => {
    const { db, statements, importMore } = await twoCompanies(t, dialect);
    const directories = new EmployeeDirectories();
    await embeddedEmployees(db, directories, { companyId: 1, version: 1 }, [1]);
    await directories.settled();
    // An import commits between the version a request read and the rows it reads.
    await importMore([employee(1, 6, { last_name: 'Newcomer' })]);
    const before = statements.length;
    const found = await embeddedEmployees(
      db,
      directories,
      { companyId: 1, version: 1 },
      [1, 6, 99],
    );
    assert.deepEqual([...found.keys()].sort(), [1, 6]);
    assert.equal(found.get(6)?.full_name, 'Ayşe Newcomer');
    assert.equal(statements.length, before + 1, 'one look-up by key for 6 and 99');
  });

  it('hold no company with more employees than they may hold, and evict the least recent', async (t) => {
    const { db, statements } = await twoCompanies(t, dialect);
    const tooSmall = new EmployeeDirectories(4);
    for (let i = 0; i < 3; i++) {
      const found = await embeddedEmployees(db, tooSmall, { companyId: 1, version: 1 }, [1, 5]);
      assert.deepEqual([...found.keys()].sort(), [1, 5]);
      await tooSmall.settled();
    }
    assert.equal(tooSmall.heldEmployees(), 0);
    // Read once (five rows: too many), then each page by key.
    assert.equal(statements.length, 4);

    const six = new EmployeeDirectories(6);
    const hold = async (companyId: number) => {
      await embeddedEmployees(db, six, { companyId, version: 1 }, []);
      await six.settled();
    };
    await hold(1);
    await hold(2);
    assert.equal(six.heldEmployees(), 3, "company 1's five went for company 2's three");
    const before = statements.length;
    await hold(2);
    assert.equal(statements.length, before, 'company 2 is held');
    await hold(1);
    assert.equal(statements.length, before + 1, 'company 1 is read again');
    assert.equal(six.heldEmployees(), 5);
  });
});
