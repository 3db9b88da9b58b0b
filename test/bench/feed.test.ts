import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { collectionsInside, type FeedRun, feedFigures } from '../../bench/harness/feed.ts';
import { formatFeed } from '../../bench/harness/report.ts';

describe('the feed part’s figures', () => {
  // 100 pages as a bootstrap reads them: employees, then leaves, then expenses, then an empty
  // last page; the first page slow (the service's first request), one expense page slower still.
  const pages = [
    { ms: 300, resource: 'employee' },
    ...Array.from({ length: 9 }, (_, i) => ({ ms: 10 + i, resource: 'employee' })),
    ...Array.from({ length: 40 }, (_, i) => ({ ms: 20 + i, resource: 'leave' })),
    ...Array.from({ length: 49 }, (_, i) => ({ ms: i === 30 ? 400 : 30 + i, resource: 'expense' })),
    { ms: 5, resource: null },
  ];
  const figures = feedFigures(pages);

  it('gives the whole read’s p50, p99 and max, and each resource’s by its pages', () => {
    assert.deepEqual(figures.latencyMs, { p50: 45, p99: 400, max: 400 });
    assert.deepEqual(Object.keys(figures.byResource), ['employee', 'leave', 'expense', 'empty']);
    assert.deepEqual(figures.byResource.employee, { pages: 10, p50: 15, p99: 300, max: 300 });
    assert.deepEqual(figures.byResource.leave, { pages: 40, p50: 40, p99: 59, max: 59 });
    assert.equal(figures.byResource.expense?.pages, 49);
    assert.equal(figures.byResource.expense?.max, 400);
    assert.deepEqual(figures.byResource.empty, { pages: 1, p50: 5, p99: 5, max: 5 });
  });

  it('names the five slowest pages by their number from 1, the slowest first', () => {
    assert.deepEqual(figures.slowest, [
      { ms: 400, page: 81, resource: 'expense' },
      { ms: 300, page: 1, resource: 'employee' },
      { ms: 78, page: 99, resource: 'expense' },
      { ms: 77, page: 98, resource: 'expense' },
      { ms: 76, page: 97, resource: 'expense' },
    ]);
  });

  it('prints them under the read’s line', () => {
    const run: FeedRun = {
      entries: 99_000,
      requests: pages.length,
      seconds: 4,
      entriesPerSecond: 24_750,
      ...figures,
      loadGeneratorGc: {
        forcedEveryPages: 5,
        forcedSeconds: 9.71,
        collections: 2,
        ms: 3.5,
        pages: 2,
      },
    };
    const [line, resources, slowest, gc] = formatFeed(run).split('\n');
    assert.match(line ?? '', /^change feed, .*p50 45\.0 ms, p99 400\.0 ms, max 400\.0 ms$/);
    assert.match(resources ?? '', /employee 10 p50 15\.0 p99 300\.0 max 300\.0; leave 40 /);
    assert.match(slowest ?? '', /: 400\.0 ms page 81 \(expense\), 300\.0 ms page 1 \(employee\), /);
    assert.match(
      gc ?? '',
      /between pages every 5 \(9\.7 s, .*\): 2 collections inside .*, 3\.5 ms in 2 pages$/,
    );
  });
});

describe('the load generator’s collections inside the pages’ timing', () => {
  // Pages at 0–10, 20–30 and 40–50 ms.
  const pages = [0, 20, 40].map((startTime) => ({ startTime, duration: 10 }));

  it('counts only the time of each collection that falls inside a page', () => {
    const collections = [
      { startTime: 12, duration: 5 }, // between pages
      { startTime: 8, duration: 4 }, // 2 ms in the first page
      { startTime: 25, duration: 2 }, // inside the second
    ];
    assert.deepEqual(collectionsInside(collections.slice(0, 1), pages), {
      collections: 0,
      ms: 0,
      pages: 0,
    });
    assert.deepEqual(
      collectionsInside(
        [...collections].sort((a, b) => a.startTime - b.startTime),
        pages,
      ),
      { collections: 2, ms: 4, pages: 2 },
    );
  });

  it('counts a collection spanning two pages once, in both pages', () => {
    assert.deepEqual(collectionsInside([{ startTime: 5, duration: 20 }], pages), {
      collections: 1,
      ms: 10,
      pages: 2,
    });
  });
});
