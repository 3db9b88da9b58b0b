import assert from 'node:assert/strict';
import { it } from 'node:test';
import { SEARCHED_TEXTS } from '../../src/db/expense-texts.ts';
import { fold } from '../../src/fold.ts';
import { useApi } from '../helpers/api.ts';
import { describeEachDialect } from '../helpers/databases.ts';
import { category, company, employee, expense } from '../helpers/records.ts';

/**
 * Searches are looked up through the company's distinct texts that contain them
 * (src/db/expense-texts.ts) when those are few: by equality in the texts' own indexes, or, with
 * a filter of its own index, through the trigram indexes for one or two letters whose texts are
 * long enough; else through the trigram indexes, or tested row by row. Every way must find what
 * testing every row finds.
 */
const TITLES = [
  'Say "cheese" please',
  'Ab',
  'Çay ocağı',
  'Client dinner',
  // More texts with "ri" than are looked up one by one.
  ...Array.from({ length: SEARCHED_TEXTS + 3 }, (_, i) => `Trip ${i + 1}`),
];
const MERCHANTS = ['Yellow Cab', 'O"Brien & Co', 'Çiya Sofrası', 'IKEA'];

describeEachDialect('searches by their texts', (dialect) => {
  it('find the expenses whose title or merchant contains the text, through its texts or not', async (t) => {
    const expenses = Array.from({ length: 400 }, (_, i) =>
      expense(1, i + 1, 1, 1, {
        title: TITLES[i % TITLES.length],
        merchant_name: MERCHANTS[(i * 7) % MERCHANTS.length],
      }),
    );
    // Another company's expenses carry every text too: none may show.
    const theirs = expenses.map((e) => ({
      ...e,
      company_id: 2,
      id: e.id + 1000,
      employee_id: 2,
      category_id: 2,
    }));
    const api = await useApi(t, dialect, {
      records: [
        company(1),
        company(2),
        employee(1, 1),
        employee(2, 2),
        category(1, 1),
        category(2, 2),
        ...expenses,
        ...theirs,
      ],
    });
    const key = await api.createKey(1);
    // With no filter (every third): "Trip", which more texts contain than are looked up, is
    // gathered through the trigram index in a fenced subquery.
    const searches = ['"', 'e"', 'ç', 'ri', 'b', 'Ab', 'c', 'zz', 'ı', 'Trip', '&', 'rip 3'];
    // Texts that the search's texts hold as titles and as merchants, on the same rows or not.
    searches.push('lient', 'yellow', '"brien &', 'a', 'ab', 'NOTHING');
    const filters = ['', '&employee_id=1', '&from=2020-01-01'];
    for (const [i, search] of searches.entries()) {
      const expected = expenses
        .filter(
          (e) =>
            fold(e.title as string).includes(fold(search)) ||
            fold(e.merchant_name as string).includes(fold(search)),
        )
        .map((e) => e.id);
      const found: number[] = [];
      const filter = filters[i % filters.length];
      for (let page = 1; ; page++) {
        const res = await api.get(
          `/expenses?search=${encodeURIComponent(search)}${filter}&per_page=100&page=${page}`,
          key,
        );
        assert.equal(res.status, 200, res.body);
        assert.equal(res.json.meta.total, expected.length, search);
        found.push(...res.json.data.map((e: { id: number }) => e.id));
        if (page >= res.json.meta.last_page) break;
      }
      assert.deepEqual(found, expected, search);
    }
  });
});
