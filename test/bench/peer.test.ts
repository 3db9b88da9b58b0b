import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MixClass } from '../../bench/harness/cold-mix.ts';
import { parseOptions } from '../../bench/harness/options.ts';
import { SEARCH_NOT_COMPARABLE, translateRequest } from '../../bench/harness/peer-requests.ts';

const translated = (path: string, mixClass: MixClass = 'status', companyId = 1) =>
  translateRequest({ class: mixClass, companyId, path, gzip: false });

/** The peer's path with its query decoded, for readable expectations. */
function peerPath(path: string, companyId = 1): string {
  const translation = translated(path, 'status', companyId);
  assert.ok('peerPath' in translation, JSON.stringify(translation));
  return decodeURIComponent(translation.peerPath);
}

describe('the peer’s requests (Platformatic DB REST)', () => {
  it('asks a look-up by id of the list route, the company as a filter', () => {
    assert.equal(
      peerPath('/expenses/123456', 7),
      '/expenses?where.companyId.eq=7&where.id.eq=123456&limit=1',
    );
    assert.equal(
      peerPath('/employees/42'),
      '/employees?where.companyId.eq=1&where.id.eq=42&limit=1',
    );
  });

  it('pages the default order (id) with OFFSET and asks for the total', () => {
    assert.equal(
      peerPath('/leaves?per_page=50&page=3'),
      '/leaves?where.companyId.eq=1&orderby.id=asc&limit=50&offset=100&totalCount=true',
    );
    assert.equal(
      peerPath('/leaves'),
      '/leaves?where.companyId.eq=1&orderby.id=asc&limit=25&totalCount=true',
    );
  });

  it('sorts by the column, then by id in the same direction', () => {
    assert.equal(
      peerPath('/expenses?sort=-amount&per_page=25&page=2'),
      '/expenses?where.companyId.eq=1&orderby.amountE4=desc&orderby.id=desc&limit=25&offset=25&totalCount=true',
    );
    assert.equal(
      peerPath('/employees?sort=full_name&per_page=100'),
      '/employees?where.companyId.eq=1&orderby.nameFolded=asc&orderby.id=asc&limit=100&totalCount=true',
    );
    assert.equal(
      peerPath('/leaves?sort=-id&per_page=25'),
      '/leaves?where.companyId.eq=1&orderby.id=desc&limit=25&totalCount=true',
    );
  });

  it('bounds a leave window by its end and its start, an expense window by its date', () => {
    assert.equal(
      peerPath('/leaves?from=2024-01-01&to=2024-03-31&status=approved,pending&per_page=25'),
      '/leaves?where.companyId.eq=1&where.endDate.gte=2024-01-01&where.startDate.lte=2024-03-31' +
        '&where.status.in=approved,pending&orderby.id=asc&limit=25&totalCount=true',
    );
    assert.equal(
      peerPath('/expenses?from=2024-01-01&to=2024-01-31&category_id=3,4&sort=expense_date'),
      '/expenses?where.companyId.eq=1&where.expenseDate.gte=2024-01-01&where.expenseDate.lte=2024-01-31' +
        '&where.categoryId.in=3,4&orderby.expenseDate=asc&orderby.id=asc&limit=25&totalCount=true',
    );
  });

  it('filters employees’ records and what changed since a time', () => {
    assert.equal(
      peerPath('/leaves?employee_id=5,9&leave_type_id=2&per_page=25'),
      '/leaves?where.companyId.eq=1&where.employeeId.in=5,9&where.leaveTypeId.in=2' +
        '&orderby.id=asc&limit=25&totalCount=true',
    );
    assert.equal(
      peerPath('/expenses?updated_since=2025-06-01T10:00:00Z&sort=-updated_at&per_page=50'),
      '/expenses?where.companyId.eq=1&where.updatedAt.gte=2025-06-01T10:00:00Z' +
        '&orderby.updatedAt=desc&orderby.id=desc&limit=50&totalCount=true',
    );
  });

  it('asks for the company’s active reference rows, all of them, by id', () => {
    assert.equal(
      peerPath('/leave-types', 3),
      '/leaveTypes?where.companyId.eq=3&where.active.eq=true&orderby.id=asc&limit=100',
    );
    assert.equal(
      peerPath('/expense-categories'),
      '/expenseCategories?where.companyId.eq=1&where.active.eq=true&orderby.id=asc&limit=100',
    );
  });

  it('leaves out what the peer cannot ask, saying why', () => {
    assert.deepEqual(translated('/employees?search=yıl&per_page=25', 'search'), {
      notComparable: SEARCH_NOT_COMPARABLE,
    });
    assert.deepEqual(translated('/expenses/12/receipt'), {
      notComparable: 'no peer route answers /expenses/12/receipt',
    });
    assert.deepEqual(translated('/employees?updated_since=2025-01-01T00:00:00Z'), {
      notComparable: 'the peer has no equivalent of updated_since',
    });
    assert.deepEqual(translated('/me'), { notComparable: 'no peer route answers /me' });
  });
});

describe('npm run bench --parts peer', () => {
  it('needs PostgreSQL, and says so on SQLite', () => {
    assert.throws(
      () => parseOptions(['--parts', 'peer'], {}),
      /--parts peer needs --db postgres \(or both\)/,
    );
    assert.deepEqual(parseOptions(['--db', 'postgres', '--parts', 'peer,cold'], {})?.parts, [
      'peer',
      'cold',
    ]);
    assert.deepEqual(parseOptions(['--db', 'both', '--parts', 'peer'], {})?.engines, [
      'sqlite',
      'postgres',
    ]);
  });
});
