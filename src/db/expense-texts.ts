import { sql } from 'kysely';
import type { ExpenseStatus } from '../domain.ts';
import { chunks } from './chunks.ts';
import type { Db } from './database.ts';
import { containsFolded, searchedByIndex, TRIGRAM } from './search.ts';

/**
 * The distinct searched texts (folded title and merchant) of each company's expenses, per
 * status and category, with how many expenses carry each; kept by the import. Expense titles
 * and merchants repeat (the same taxi firm, "Client dinner"), so counting the expenses a
 * search matches reads the distinct texts, not every expense: a two-letter search over a
 * million expenses counted 90,273 matches by testing a million rows (100–300 ms); its texts
 * are a few hundred rows. Where every text differs, this is as many rows as the expenses, and
 * no slower to read than they are.
 */
export async function refreshExpenseTexts(trx: Db, companyIds: readonly number[]): Promise<void> {
  for (const chunk of chunks(companyIds)) {
    await trx.deleteFrom('expense_texts').where('company_id', 'in', chunk).execute();
    await trx
      .insertInto('expense_texts')
      .columns([
        'company_id',
        'status',
        'category_id',
        'title_folded',
        'merchant_folded',
        'expenses',
      ])
      .expression((eb) =>
        eb
          .selectFrom('expenses')
          .select([
            'company_id',
            'status',
            'category_id',
            'title_folded',
            'merchant_folded',
            sql<number>`count(*)`.as('expenses'),
          ])
          .where('company_id', 'in', chunk)
          .groupBy(['company_id', 'status', 'category_id', 'title_folded', 'merchant_folded']),
      )
      .execute();
  }
}

/** How many of the company's expenses of these statuses and categories a search matches. */
export async function countSearchedExpenses(
  db: Db,
  companyId: number,
  search: string,
  filters: { status?: readonly ExpenseStatus[]; categoryIds?: readonly number[] },
): Promise<number> {
  let query = db
    .selectFrom('expense_texts as t')
    .select(sql<number | string | null>`sum(t.expenses)`.as('total'))
    .where('t.company_id', '=', companyId)
    .where((eb) =>
      eb.or([
        containsFolded('t.title_folded', search),
        containsFolded('t.merchant_folded', search),
      ]),
    );
  if (filters.status) query = query.where('t.status', 'in', filters.status);
  if (filters.categoryIds) query = query.where('t.category_id', 'in', filters.categoryIds);
  const row = await query.executeTakeFirst();
  return Number(row?.total ?? 0);
}

/** Up to this many distinct texts stand for a search in a list query. */
export const SEARCHED_TEXTS = 32;

/**
 * The company's distinct folded titles and merchants that contain a search, or null when more
 * than `most` do (SEARCHED_TEXTS unless told). Every expense that contains the search carries one of these texts
 * (as its title or its merchant), and every expense that carries one contains the search: the
 * rows holding any of them are the search's rows. They are found by equality in the texts' own
 * indexes (see `carryingTexts`), or, for a search of one or two letters, which the trigram
 * indexes cannot find, through the trigram indexes by texts a trigram long (see
 * `trigramTexts`): `/expenses?search=af` was a test of a million rows (300–470 ms under the
 * cold mix); its two texts find its 8,602 rows through the index.
 *
 * Read from `expense_texts` for every search: a few hundred rows for the bench company, as
 * many as its expenses where every text differs (and then a common search has more than
 * SEARCHED_TEXTS texts, found after reading a few).
 */
export async function searchedTexts(
  db: Db,
  companyId: number,
  search: string,
  most = SEARCHED_TEXTS,
): Promise<string[] | null> {
  const column = (name: 'title_folded' | 'merchant_folded') =>
    db
      .selectFrom('expense_texts as t')
      .select(`t.${name} as text`)
      .distinct()
      .where('t.company_id', '=', companyId)
      .where(containsFolded(`t.${name}`, search));
  const rows = await column('title_folded')
    .union(column('merchant_folded'))
    .limit(most + 1)
    .execute();
  const texts = rows.map((row) => row.text);
  return texts.length > most ? null : texts;
}

/**
 * A short search's texts as the trigram indexes find them (`matchesAnyText`): null for a
 * search long enough for the indexes itself, or when a text is shorter than a trigram.
 */
export function trigramTexts(search: string, texts: readonly string[] | null): string[] | null {
  if (searchedByIndex(search) || texts === null) return null;
  return texts.some((text) => [...text].length < TRIGRAM) ? null : [...texts];
}
