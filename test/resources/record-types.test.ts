import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  camelCase,
  IMPORTED_TABLES,
  LISTED_TABLES,
  RECORD_TYPES,
  WRITE_ORDER,
} from '../../src/resources/index.ts';

describe('record types', () => {
  it('are written parents first, and in their own order within a level', () => {
    const written = WRITE_ORDER.map((d) => d.type);
    assert.deepEqual([...written].sort(), RECORD_TYPES.map((d) => d.type).sort());
    assert.equal(written[0], 'company');
    for (const descriptor of WRITE_ORDER) {
      for (const parent of descriptor.parents) {
        assert.ok(
          written.indexOf(parent.type) < written.indexOf(descriptor.type),
          `${parent.type} before ${descriptor.type}`,
        );
      }
    }
    // Today's types: the order the writer has always used.
    assert.deepEqual(written.slice(0, 2), ['company', 'employee']);
    assert.ok(written.indexOf('expense_category') < written.indexOf('leave'));
  });

  it('name every table an import writes once, a record’s children right after it', () => {
    assert.equal(new Set(IMPORTED_TABLES).size, IMPORTED_TABLES.length);
    for (const { table, children, receipt } of RECORD_TYPES) {
      const at = IMPORTED_TABLES.indexOf(table);
      assert.ok(at >= 0, table);
      const following = [...children.map((c) => c.table), ...(receipt ? ['receipts'] : [])];
      assert.deepEqual(IMPORTED_TABLES.slice(at + 1, at + 1 + following.length), following, table);
    }
    for (const table of LISTED_TABLES) assert.ok(IMPORTED_TABLES.includes(table), table);
  });

  it('point each sampled list at its own table, with sort fields that start with id', () => {
    for (const { type, table, list } of RECORD_TYPES) {
      if (!list) continue;
      assert.equal(list.sortFields[0], 'id', type);
      if (list.sampled) assert.equal(list.sampled.table, table, type);
    }
  });

  it('have unique names, tables and nouns', () => {
    for (const values of [
      RECORD_TYPES.map((d) => d.type),
      RECORD_TYPES.map((d) => d.table),
      RECORD_TYPES.map((d) => d.noun[1]),
    ]) {
      assert.equal(new Set(values).size, values.length, values.join());
    }
  });

  it('name their ids in camelCase, as the demo keys them', () => {
    assert.equal(camelCase('company'), 'company');
    assert.equal(camelCase('leave_type'), 'leaveType');
    assert.equal(camelCase('expense_category'), 'expenseCategory');
  });
});
