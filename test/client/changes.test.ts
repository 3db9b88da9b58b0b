import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Change, createClient } from '../../client/src/index.ts';
import { useApi } from '../helpers/api.ts';
import { listenApi } from '../helpers/listen.ts';
import { employee, smallCompany } from '../helpers/records.ts';

describe('client: changes.follow', () => {
  it('reads the feed from the beginning, each record once, and ends when caught up', async (t) => {
    const api = await useApi(t, 'sqlite', { records: [...smallCompany(1, 0), employee(1, 2)] });
    const client = createClient({ baseUrl: await listenApi(api), apiKey: await api.createKey(1) });
    const entries: Change[] = [];
    for await (const entry of client.changes.follow({ limit: 2 })) entries.push(entry);
    assert.deepEqual(
      entries.map((entry) => `${entry.resource} ${entry.id} ${entry.change}`).sort(),
      [
        'employee 1 upsert',
        'employee 2 upsert',
        'expense 1 upsert',
        'expense_category 1 upsert',
        'leave 1 upsert',
        'leave_type 1 upsert',
      ],
    );
    assert.equal(new Set(entries.map((entry) => entry.cursor)).size, entries.length);
    const employee2 = entries.find((entry) => entry.resource === 'employee' && entry.id === 2);
    assert.deepEqual(employee2?.record, await client.employees.get(2));

    const last = entries.at(-1)?.cursor;
    const none: Change[] = [];
    for await (const entry of client.changes.follow({ after: last })) none.push(entry);
    assert.deepEqual(none, []);
  });

  it('keeps polling with pollIntervalMs, hears an import made meanwhile, and stops at once on abort', async (t) => {
    const api = await useApi(t, 'sqlite', { records: smallCompany(1, 0) });
    const client = createClient({ baseUrl: await listenApi(api), apiKey: await api.createKey(1) });
    const page = await client.changes.list({ limit: 1000 });
    const controller = new AbortController();
    const heard: Change[] = [];
    const following = (async () => {
      for await (const entry of client.changes.follow({
        after: page.meta.next_cursor,
        pollIntervalMs: 50,
        signal: controller.signal,
      })) {
        heard.push(entry);
        controller.abort();
      }
    })();
    await api.load([employee(1, 1, { last_name: 'Polled' })]);
    await assert.rejects(following, { name: 'AbortError' });
    // The employee, and the leave and the expense that embed it, came in one page; the abort
    // after the first entry stops the rest of it.
    assert.deepEqual(
      heard.map((entry) => `${entry.resource} ${entry.id}`),
      ['employee 1'],
    );
    assert.equal((heard[0]?.record as { full_name?: string } | null)?.full_name, 'Ayşe Polled');
  });
});
