import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import type { ServerConfig } from '../../src/config.ts';
import type { Dialect } from '../../src/db/connect.ts';
import { type ApiResponse, type TestApi, useApi } from '../helpers/api.ts';
import { describeEachDialect } from '../helpers/databases.ts';
import { listenApi } from '../helpers/listen.ts';
import { insufficientScope, NOT_FOUND, validationFailed } from '../helpers/problems.ts';
import { NOT_PLAIN_NUMBERS } from '../helpers/query-values.ts';
import { category, company, employee, expense, writeJpeg } from '../helpers/records.ts';

/**
 * app.inject speaks plain HTTP to Host `localhost:80`; without PUBLIC_BASE_URL, URLs use it,
 * without http's default port.
 */
const INJECTED_BASE = 'http://localhost/api/company/v1';
const PUBLIC_BASE = 'https://api.example.com/api/company/v1';
const EXPENSE_STATUSES_MESSAGE =
  'must be a comma-separated list of: pending, approved, rejected, paid, cancelled';
const ID_LIST_MESSAGE =
  'must be a positive integer id or a comma-separated list of up to 100, in plain decimal digits without spaces';
const DATE_MESSAGE = 'must be a real calendar date YYYY-MM-DD';
const SORT_MESSAGE =
  'must be one of id, expense_date, amount, created_at, updated_at, each optionally prefixed with -';

/** A fresh API over `records` (which may name the receipt image `r.jpg`) and a key of company 1. */
async function serve(
  t: TestContext,
  dialect: Dialect,
  records: unknown[],
  config: Partial<ServerConfig> = {},
) {
  const api = await useApi(t, dialect, { config });
  await writeJpeg(api.dir, 'r.jpg');
  await api.load(records);
  return { api, key: await api.createKey(1) };
}

const ids = (res: ApiResponse): number[] => res.json.data.map((item: { id: number }) => item.id);

function assertProblem(
  res: ApiResponse,
  expected: { status: number; [field: string]: unknown },
  context?: string,
): void {
  assert.equal(res.status, expected.status, `${context ?? ''} ${res.body}`);
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
  assert.deepEqual(res.json, expected, context);
}

/** Company 1 with one employee (10) and one category (3); company 2 alongside. */
const twoCompanies = () => [
  company(1),
  employee(1, 10, { employee_number: 'E-0010', department: 'Sales' }),
  category(1, 3, { name: 'Travel' }),
  company(2),
  employee(2, 20),
  category(2, 21),
];

/** The list item of `expense(1, 500, 10, 3, …)` with a receipt, as the API serves it. */
const taxiWithReceipt = (base: string) => ({
  id: 500,
  status: 'paid',
  title: 'Taxi',
  description: 'Airport to office',
  amount: 1250.5,
  currency: 'TRY',
  tax_amount: 225.09,
  expense_date: '2026-03-05',
  merchant_name: 'Yellow Cab',
  payment_method: 'corporate_card',
  category: { id: 3, name: 'Travel' },
  employee: { id: 10, employee_number: 'E-0010', full_name: 'Ayşe Yılmaz', department: 'Sales' },
  has_receipt: true,
  receipt_url: `${base}/expenses/500/receipt`,
  approved_at: '2026-03-06T10:00:00Z',
  paid_at: '2026-03-10T10:00:00Z',
  rejected_reason: null,
  submitted_at: '2026-03-05T18:00:00Z',
  created_at: '2026-03-05T18:00:00Z',
  updated_at: '2026-03-10T10:00:00Z',
});

const rejectedLunch = {
  id: 501,
  status: 'rejected',
  title: 'Lunch',
  description: null,
  amount: 80,
  currency: 'EUR',
  tax_amount: 0,
  expense_date: '2026-03-07',
  merchant_name: 'Bistro',
  payment_method: 'cash',
  category: { id: 3, name: 'Travel' },
  employee: { id: 10, employee_number: 'E-0010', full_name: 'Ayşe Yılmaz', department: 'Sales' },
  has_receipt: false,
  receipt_url: null,
  approved_at: null,
  paid_at: null,
  rejected_reason: 'Not a business expense',
  // Imported as 2026-03-07T14:00:00+03:00: served in UTC.
  submitted_at: '2026-03-07T11:00:00Z',
  created_at: '2026-03-07T11:00:00Z',
  updated_at: '2026-03-08T09:30:00Z',
};

const shapeRecords = () => [
  ...twoCompanies(),
  expense(1, 500, 10, 3, {
    description: 'Airport to office',
    receipt: { original: 'r.jpg' },
    items: [
      { name: 'Ride', quantity: 1, price: '1200.50' },
      { name: 'Toll', quantity: 2, price: 25 },
      { name: 'Waiting', quantity: 0.5, price: '0.00' },
    ],
  }),
  expense(1, 501, 10, 3, {
    status: 'rejected',
    title: 'Lunch',
    amount: '80.00',
    currency: 'EUR',
    tax_amount: 0,
    expense_date: '2026-03-07',
    merchant_name: 'Bistro',
    payment_method: 'cash',
    approved_at: null,
    paid_at: null,
    rejected_reason: 'Not a business expense',
    submitted_at: '2026-03-07T14:00:00+03:00',
    created_at: '2026-03-07T11:00:00Z',
    updated_at: '2026-03-08T09:30:00Z',
    items: [],
  }),
  expense(2, 600, 20, 21, { receipt: { original: 'r.jpg' } }),
];

describeEachDialect('GET /expenses', (dialect) => {
  describe('shape', () => {
    it('serves every field of a list item, money as numbers, only the key’s company', async (t) => {
      const { api, key } = await serve(t, dialect, shapeRecords());
      const res = await api.get('/expenses', key);
      assert.equal(res.status, 200, res.body);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.deepEqual(res.json, {
        data: [taxiWithReceipt(INJECTED_BASE), rejectedLunch],
        meta: { current_page: 1, per_page: 25, total: 2, last_page: 1, from: 1, to: 2 },
      });
      assert.ok(res.body.includes('"amount":1250.5,'), res.body);
      assert.ok(res.body.includes('"tax_amount":225.09,'), res.body);
    });

    it('builds receipt_url from the Host the client used', async (t) => {
      const { api, key } = await serve(t, dialect, shapeRecords());
      const res = await api.get('/expenses?per_page=1', key, {
        headers: { host: 'hr.acme.test:8443' },
      });
      assert.equal(res.status, 200, res.body);
      assert.equal(
        res.json.data[0].receipt_url,
        'http://hr.acme.test:8443/api/company/v1/expenses/500/receipt',
      );
    });

    it('answers 400 to a Host that names no host, instead of URLs built from it', async (t) => {
      const { api, key } = await serve(t, dialect, shapeRecords());
      const hosts = [
        'a<b',
        '[::1',
        'ex.com/x',
        'a b',
        'ex.com:99999999',
        'ex.com:65536',
        'ex.com:0',
        'ex.com:00',
        'ex.com:08080',
        'user@ex.com',
        // Names a URL refuses, or reads as no host: empty labels, a label starting or ending
        // in '-', numbers that are not an IPv4 address.
        '.',
        '..',
        '-',
        'a..b',
        '-ex.com',
        'ex-.com',
        '999.999.999.999',
        '1.2.3.4.5',
        '1.2.3',
        '[::g]',
        // Hexadecimal numbers a URL reads as an address (0.0.0.16), or refuses.
        '0x10',
        'a.0x10',
        'a.0X1f.',
        '0x7f.1',
        '[::ffff:01.2.3.4]',
      ];
      for (const host of hosts) {
        for (const path of ['/expenses', '/expenses/500', '/expenses/500/receipt', '/me']) {
          const res = await api.get(path, key, { headers: { host } });
          assert.equal(res.status, 400, `${host} ${path}: ${res.body}`);
          assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
          assert.equal(res.json.code, 'bad_request');
          assert.doesNotMatch(res.body, /ex\.com|a<b/);
        }
      }
      for (const host of [
        '[::1]:8080',
        '10.0.0.7',
        'api_internal.local:8080',
        'ex.com:65535',
        'hr.acme.test.',
        'x',
      ]) {
        const res = await api.get('/expenses/500', key, { headers: { host } });
        assert.equal(
          res.json.data.receipt_url,
          `http://${host}/api/company/v1/expenses/500/receipt`,
        );
      }
      // An empty port is the scheme's default (RFC 3986 §3.2.3); URLs leave its colon out, and
      // the default port itself, and spell the host in lower case (§6.2.2–6.2.3).
      for (const [host, built] of [
        ['hr.acme.test:', 'hr.acme.test'],
        ['[::1]:', '[::1]'],
        ['api_internal.local:80', 'api_internal.local'],
        ['HR.Acme.TEST:8080', 'hr.acme.test:8080'],
        ['[FE80::1]:80', '[fe80::1]'],
        // IPv6 in its shortest form, as the URL parser writes it (and PUBLIC_BASE_URL is read).
        ['[0:0:0:0:0:0:0:1]:80', '[::1]'],
        ['[::FFFF:127.0.0.1]', '[::ffff:7f00:1]'],
        ['0x10.example', '0x10.example'],
        ['x:443', 'x:443'],
        ['x:180', 'x:180'],
      ]) {
        const res = await api.get('/expenses/500', key, { headers: { host } });
        assert.equal(
          res.json.data.receipt_url,
          `http://${built}/api/company/v1/expenses/500/receipt`,
        );
      }
    });

    it('takes the host and scheme from a trusted proxy’s headers, and refuses ones that name none', async (t) => {
      const { api, key } = await serve(t, dialect, shapeRecords(), { trustProxy: true });
      const forwarded = (headers: Record<string, string>) =>
        api.get('/expenses/500', key, { headers: { host: 'internal:8080', ...headers } });
      // Schemes are case-insensitive; URLs carry them in lower case.
      for (const proto of ['https', 'HTTPS']) {
        const good = await forwarded({
          'x-forwarded-host': 'hr.acme.test',
          'x-forwarded-proto': proto,
        });
        assert.equal(
          good.json.data.receipt_url,
          'https://hr.acme.test/api/company/v1/expenses/500/receipt',
          proto,
        );
      }
      // https's default port is left out as http's is; http's is not https's.
      for (const [host, proto, built] of [
        ['HR.acme.test:443', 'https', 'https://hr.acme.test'],
        ['hr.acme.test:80', 'https', 'https://hr.acme.test:80'],
        ['hr.acme.test:443', 'http', 'http://hr.acme.test:443'],
      ] as const) {
        const res = await forwarded({ 'x-forwarded-host': host, 'x-forwarded-proto': proto });
        assert.equal(res.json.data.receipt_url, `${built}/api/company/v1/expenses/500/receipt`);
      }
      for (const headers of [
        { 'x-forwarded-host': 'a b' } as Record<string, string>,
        { 'x-forwarded-host': '[::1' },
        { 'x-forwarded-proto': 'javascript' },
        { 'x-forwarded-proto': 'ht tp' },
      ]) {
        const res = await forwarded(headers);
        assert.equal(res.status, 400, `${JSON.stringify(headers)}: ${res.body}`);
        assert.equal(res.json.code, 'bad_request');
      }
    });

    it('builds receipt_url from the listener’s address for an HTTP/1.0 request without Host', async (t) => {
      const { api, key } = await serve(t, dialect, shapeRecords());
      const base = new URL(await listenApi(api));
      const socket = connect(Number(base.port), base.hostname);
      socket.write(
        `GET /api/company/v1/expenses/500 HTTP/1.0\r\nAuthorization: Bearer ${key}\r\n\r\n`,
      );
      let answer = '';
      for await (const chunk of socket) answer += chunk;
      assert.match(answer, /^HTTP\/1\.1 200 /);
      const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
      assert.equal(
        body.data.receipt_url,
        `http://127.0.0.1:${base.port}/api/company/v1/expenses/500/receipt`,
      );
    });

    it('builds receipt_url from the host of a request-target in absolute form, not Host', async (t) => {
      const bases = new Map<TestApi, URL>();
      const ask = async (api: TestApi, key: string, target: string, headers = '') => {
        const base = bases.get(api) ?? new URL(await listenApi(api));
        bases.set(api, base);
        const socket = connect(Number(base.port), base.hostname);
        socket.write(
          `GET ${target} HTTP/1.1\r\nHost: other.test\r\n${headers}Authorization: Bearer ${key}\r\nConnection: close\r\n\r\n`,
        );
        let answer = '';
        for await (const chunk of socket) answer += chunk;
        const status = Number(answer.slice(9, 12));
        return { status, body: JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) };
      };
      const target = 'http://hr.acme.test:8080/api/company/v1/expenses/500';
      const direct = await serve(t, dialect, shapeRecords());
      // RFC 9112 §3.2.2: the target's own host comes before the Host line.
      const absolute = await ask(direct.api, direct.key, target);
      assert.equal(absolute.status, 200);
      assert.equal(
        absolute.body.data.receipt_url,
        'http://hr.acme.test:8080/api/company/v1/expenses/500/receipt',
      );
      // No URL of this API can be built on a target's user info.
      const userInfo = await ask(
        direct.api,
        direct.key,
        'http://someone@hr.acme.test/api/company/v1/expenses/500',
      );
      assert.equal(userInfo.status, 400);
      assert.equal(userInfo.body.code, 'bad_request');
      assert.match(userInfo.body.detail, /request-target/);
      // Nor on an empty host (RFC 9110 §4.2.1), which leaves the router no path: not a 404.
      for (const empty of ['http:///api/company/v1/expenses/500', 'http:///elsewhere']) {
        const refused = await ask(direct.api, direct.key, empty);
        assert.equal(refused.status, 400, empty);
        assert.match(refused.body.detail, /request-target/);
      }
      // Behind a trusted proxy, the public host it names still comes first.
      const proxied = await serve(t, dialect, shapeRecords(), { trustProxy: true });
      const viaProxy = await ask(
        proxied.api,
        proxied.key,
        target,
        'X-Forwarded-Host: public.test\r\n',
      );
      assert.equal(
        viaProxy.body.data.receipt_url,
        'http://public.test/api/company/v1/expenses/500/receipt',
      );
    });

    it('builds receipt_url from PUBLIC_BASE_URL when it is configured', async (t) => {
      const { api, key } = await serve(t, dialect, shapeRecords(), { publicBaseUrl: PUBLIC_BASE });
      const res = await api.get('/expenses', key, { headers: { host: 'internal:8080' } });
      assert.equal(res.status, 200, res.body);
      assert.deepEqual(res.json.data, [taxiWithReceipt(PUBLIC_BASE), rejectedLunch]);
    });

    it('embeds an inactive category and an inactive employee', async (t) => {
      const { api, key } = await serve(t, dialect, [
        company(1),
        employee(1, 10, { status: 'terminated', department: 'Ops' }),
        category(1, 4, { name: 'Retired category', active: false }),
        expense(1, 500, 10, 4),
      ]);
      const res = await api.get('/expenses', key);
      assert.equal(res.status, 200, res.body);
      assert.deepEqual(res.json.data[0].category, { id: 4, name: 'Retired category' });
      assert.deepEqual(res.json.data[0].employee, {
        id: 10,
        employee_number: 'E-10',
        full_name: 'Ayşe Yılmaz',
        department: 'Ops',
      });
    });
  });

  describe('money', () => {
    it('round-trips decimal amounts exactly, in the list and the single record', async (t) => {
      const amounts: Array<[id: number, amount: string | number, currency: string, text: string]> =
        [
          [1, '0.10', 'EUR', '0.1'],
          [2, 0.2, 'EUR', '0.2'],
          [3, '19.99', 'USD', '19.99'],
          [4, '1000000.01', 'TRY', '1000000.01'],
          [5, '1500', 'JPY', '1500'],
          [6, 0.3, 'EUR', '0.3'],
        ];
      const { api, key } = await serve(t, dialect, [
        ...twoCompanies(),
        ...amounts.map(([id, amount, currency]) =>
          expense(1, id, 10, 3, {
            amount,
            currency,
            tax_amount: amount,
            items: [{ name: 'Item', quantity: 1, price: amount }],
          }),
        ),
      ]);
      const list = await api.get('/expenses', key);
      assert.equal(list.status, 200, list.body);
      assert.deepEqual(
        list.json.data.map((x: { amount: number; tax_amount: number; currency: string }) => [
          x.amount,
          x.tax_amount,
          x.currency,
        ]),
        [
          [0.1, 0.1, 'EUR'],
          [0.2, 0.2, 'EUR'],
          [19.99, 19.99, 'USD'],
          [1000000.01, 1000000.01, 'TRY'],
          [1500, 1500, 'JPY'],
          [0.3, 0.3, 'EUR'],
        ],
      );
      for (const [id, , , text] of amounts) {
        assert.ok(list.body.includes(`"amount":${text},`), `list lacks "amount":${text}`);
        assert.ok(list.body.includes(`"tax_amount":${text},`), `list lacks "tax_amount":${text}`);
        const one = await api.get(`/expenses/${id}`, key);
        assert.equal(one.status, 200, one.body);
        assert.ok(one.body.includes(`"amount":${text},`), one.body);
        assert.ok(one.body.includes(`"tax_amount":${text},`), one.body);
        assert.ok(one.body.includes(`"price":${text}}`), one.body);
      }
    });
  });

  describe('filters', () => {
    // biome-ignore format: one expense a line reads as a table
    const filterRows = [
      // id, employee, category, status, expense_date, title, merchant_name, updated_at (all 2026)
      [101, 10, 1, 'pending', '03-01', 'Taxi to airport', 'Yellow Cab', '03-01T09:00:00Z'],
      [102, 11, 2, 'approved', '03-05', 'Team lunch', 'Café Müller', '03-05T12:00:00Z'],
      [103, 12, 3, 'rejected', '03-10', '50% off paper', 'Office World', '03-10T08:00:00Z'],
      [104, 10, 2, 'paid', '03-15', 'Dinner for 500 guests', 'Grand Hotel', '03-15T20:00:00Z'],
      [105, 11, 1, 'cancelled', '03-20', 'Ticket_42', 'İSTANBUL Raylı Sistem', '03-20T07:00:00Z'],
      [106, 12, 3, 'paid', '03-31', 'Ticket 42', 'SÉBASTIEN Store', '03-31T23:59:59Z'],
    ] as const;

    /** The rows above, and company 2's expense 201: it matches most filters but must never show. */
    const filterRecords = () => [
      company(1),
      employee(1, 10),
      employee(1, 11),
      employee(1, 12),
      category(1, 1),
      category(1, 2, { name: 'Meals' }),
      category(1, 3, { name: 'Office' }),
      company(2),
      employee(2, 20),
      category(2, 21),
      ...filterRows.map(([id, employeeId, categoryId, status, date, title, merchant, updated]) =>
        expense(1, id, employeeId, categoryId, {
          status,
          expense_date: `2026-${date}`,
          title,
          merchant_name: merchant,
          updated_at: `2026-${updated}`,
        }),
      ),
      expense(2, 201, 20, 21, {
        title: 'Taxi 50% Ticket_42',
        merchant_name: 'Café Müller',
        expense_date: '2026-03-10',
        updated_at: '2026-03-31T23:59:59Z',
      }),
    ];

    async function expectFilters(
      t: TestContext,
      cases: Array<[query: string, expected: number[]]>,
    ): Promise<void> {
      const { api, key } = await serve(t, dialect, filterRecords());
      for (const [query, expected] of cases) {
        const res = await api.get(`/expenses?${query}`, key);
        assert.equal(res.status, 200, `${query}: ${res.body}`);
        assert.deepEqual(ids(res), expected, query);
        assert.equal(res.json.meta.total, expected.length, query);
      }
    }

    it('lists every expense of the company without filters', (t) =>
      expectFilters(t, [['', [101, 102, 103, 104, 105, 106]]]));

    it('filters by one status or a comma-separated list of statuses', (t) =>
      expectFilters(t, [
        ['status=pending', [101]],
        ['status=paid', [104, 106]],
        ['status=paid,rejected', [103, 104, 106]],
        ['status=%20paid%20,%20pending%20', [101, 104, 106]],
        ['status=approved,cancelled,approved', [102, 105]],
      ]));

    it('filters by one employee_id or a comma-separated list', (t) =>
      expectFilters(t, [
        ['employee_id=10', [101, 104]],
        ['employee_id=10,12', [101, 103, 104, 106]],
        ['employee_id=20', []],
        ['employee_id=999', []],
      ]));

    it('filters by one category_id or a comma-separated list', (t) =>
      expectFilters(t, [
        ['category_id=2', [102, 104]],
        ['category_id=1,3', [101, 103, 105, 106]],
        ['category_id=21', []],
      ]));

    it('filters expense_date between from and to, both inclusive', (t) =>
      expectFilters(t, [
        ['from=2026-03-10', [103, 104, 105, 106]],
        ['from=2026-03-11', [104, 105, 106]],
        ['to=2026-03-10', [101, 102, 103]],
        ['to=2026-03-09', [101, 102]],
        ['from=2026-03-05&to=2026-03-15', [102, 103, 104]],
        ['from=2026-03-10&to=2026-03-10', [103]],
        ['from=2026-03-01&to=2026-03-31', [101, 102, 103, 104, 105, 106]],
        ['from=2026-04-01', []],
      ]));

    it('searches title and merchant, case- and accent-insensitively', (t) =>
      expectFilters(t, [
        ['search=taxi', [101]],
        ['search=TAXI%20TO', [101]],
        ['search=yellow', [101]],
        ['search=cafe%20muller', [102]],
        ['search=CAF%C3%89%20M%C3%9CLLER', [102]],
        ['search=istanbul', [105]],
        ['search=RAYLI', [105]],
        ['search=sebastien', [106]],
        ['search=ticket', [105, 106]],
        ['search=o', [101, 103, 104, 106]],
        ['search=nowhere', []],
      ]));

    it('takes % and _ in a search literally', (t) =>
      expectFilters(t, [
        ['search=50%25', [103]],
        ['search=500', [104]],
        ['search=%25', [103]],
        ['search=_', [105]],
        ['search=ticket_42', [105]],
        ['search=t_xi', []],
        ['search=%5C', []],
      ]));

    it('ignores an empty or blank search, and matches nothing for a NUL', (t) =>
      expectFilters(t, [
        ['search=', [101, 102, 103, 104, 105, 106]],
        ['search=%20%20', [101, 102, 103, 104, 105, 106]],
        ['search=%00', []],
      ]));

    it('reads a % that starts no escape as itself, and UTF-8 escapes as their characters', (t) =>
      expectFilters(t, [
        ['search=50%', [103]],
        ['search=caf%C3%A9', [102]],
      ]));

    it('filters by updated_since, inclusive, in any offset', (t) =>
      expectFilters(t, [
        ['updated_since=2026-03-10T08:00:00Z', [103, 104, 105, 106]],
        ['updated_since=2026-03-10T08:00:01Z', [104, 105, 106]],
        ['updated_since=2026-03-10T11:00:00%2B03:00', [103, 104, 105, 106]],
        ['updated_since=2026-03-10T03:00:00-05:00', [103, 104, 105, 106]],
        ['updated_since=2026-03-31T23:59:59Z', [106]],
        ['updated_since=2026-04-01T00:00:00Z', []],
      ]));

    it('applies a leap-second updated_since rather than ignoring it', (t) =>
      // RFC 3339 allows second 60; whichever instant it is read as, nothing here is that recent.
      expectFilters(t, [
        ['updated_since=2026-03-31T23:59:60Z', []],
        // The same instant in another offset.
        ['updated_since=2026-04-01T02:59:60%2B03:00', []],
        ['updated_since=2026-03-31T20:59:60-03:00', []],
      ]));

    it('combines every filter with AND', (t) =>
      expectFilters(t, [
        ['status=paid,rejected&employee_id=10,12', [103, 104, 106]],
        ['status=paid,rejected&employee_id=10,12&from=2026-03-12', [104, 106]],
        ['status=paid,rejected&employee_id=10,12&from=2026-03-12&category_id=2', [104]],
        ['status=paid&search=ticket', [106]],
        ['category_id=1,2&to=2026-03-15&search=a', [101, 102, 104]],
        ['employee_id=11&updated_since=2026-03-06T00:00:00Z&search=istanbul', [105]],
        [
          [
            'status=paid',
            'employee_id=12',
            'category_id=3',
            'from=2026-03-31',
            'to=2026-03-31',
            'search=store',
            'updated_since=2026-03-31T23:59:59Z',
          ].join('&'),
          [106],
        ],
        ['status=pending&employee_id=12', []],
      ]));

    it('paginates a filtered list with meta of the filtered total', async (t) => {
      const { api, key } = await serve(t, dialect, filterRecords());
      const res = await api.get('/expenses?status=paid,rejected,pending&per_page=2&page=2', key);
      assert.equal(res.status, 200, res.body);
      assert.deepEqual(ids(res), [104, 106]);
      assert.deepEqual(res.json.meta, {
        current_page: 2,
        per_page: 2,
        total: 4,
        last_page: 2,
        from: 3,
        to: 4,
      });
    });
  });

  describe('sort', () => {
    /** Ties on every field but id; amounts that order differently as text (10 < 100 < 9.5). */
    const sortRows = [
      // id, expense_date, amount, created_at, updated_at
      [303, '2026-03-02', '10.00', '2026-02-28T10:00:00Z', '2026-03-04T10:00:00Z'],
      [301, '2026-03-02', '100', '2026-03-01T10:00:00Z', '2026-03-04T10:00:00Z'],
      [305, '2026-03-02', 9.5, '2026-03-01T09:59:59Z', '2026-03-05T00:00:00Z'],
      [302, '2026-03-01', '9.50', '2026-03-01T13:00:00+03:00', '2026-03-06T10:00:00Z'],
      [304, '2026-02-27', 10, '2026-03-03T10:00:00Z', '2026-03-01T10:00:00Z'],
    ] as const;
    const sortRecords = () => [
      ...twoCompanies(),
      ...sortRows.map(([id, date, amount, created, updated]) =>
        expense(1, id, 10, 3, {
          expense_date: date,
          amount,
          tax_amount: 0,
          created_at: created,
          updated_at: updated,
        }),
      ),
    ];

    it('orders by each sort field, ascending and descending, id breaking ties alike', async (t) => {
      const { api, key } = await serve(t, dialect, sortRecords());
      const cases: Array<[sort: string, expected: number[]]> = [
        ['id', [301, 302, 303, 304, 305]],
        ['-id', [305, 304, 303, 302, 301]],
        ['expense_date', [304, 302, 301, 303, 305]],
        ['-expense_date', [305, 303, 301, 302, 304]],
        ['amount', [302, 305, 303, 304, 301]],
        ['-amount', [301, 304, 303, 305, 302]],
        ['created_at', [303, 305, 301, 302, 304]],
        ['-created_at', [304, 302, 301, 305, 303]],
        ['updated_at', [304, 301, 303, 305, 302]],
        ['-updated_at', [302, 305, 303, 301, 304]],
      ];
      for (const [sort, expected] of cases) {
        const res = await api.get(`/expenses?sort=${sort}`, key);
        assert.equal(res.status, 200, `${sort}: ${res.body}`);
        assert.deepEqual(ids(res), expected, `sort=${sort}`);
      }
      const byDefault = await api.get('/expenses', key);
      assert.deepEqual(ids(byDefault), [301, 302, 303, 304, 305]);
    });

    it('keeps a sorted order stable across pages', async (t) => {
      const { api, key } = await serve(t, dialect, sortRecords());
      const pages: number[][] = [];
      for (const page of [1, 2, 3]) {
        pages.push(ids(await api.get(`/expenses?sort=-amount&per_page=2&page=${page}`, key)));
      }
      assert.deepEqual(pages, [[301, 304], [303, 305], [302]]);
    });
  });

  describe('pagination', () => {
    const manyRecords = (count: number) => [
      ...twoCompanies(),
      ...Array.from({ length: count }, (_, i) => expense(1, 1000 + count - i, 10, 3)),
    ];
    const range = (first: number, last: number) =>
      Array.from({ length: last - first + 1 }, (_, i) => first + i);

    it('pages by id with 25 a page by default, and an empty page past the end', async (t) => {
      const { api, key } = await serve(t, dialect, manyRecords(101));
      const cases: Array<[query: string, data: number[], meta: object]> = [
        [
          '',
          range(1001, 1025),
          { current_page: 1, per_page: 25, total: 101, last_page: 5, from: 1, to: 25 },
        ],
        [
          'page=2',
          range(1026, 1050),
          { current_page: 2, per_page: 25, total: 101, last_page: 5, from: 26, to: 50 },
        ],
        [
          'page=5',
          [1101],
          { current_page: 5, per_page: 25, total: 101, last_page: 5, from: 101, to: 101 },
        ],
        [
          'page=6',
          [],
          { current_page: 6, per_page: 25, total: 101, last_page: 5, from: null, to: null },
        ],
        [
          'per_page=1&page=3',
          [1003],
          { current_page: 3, per_page: 1, total: 101, last_page: 101, from: 3, to: 3 },
        ],
        [
          'per_page=100',
          range(1001, 1100),
          { current_page: 1, per_page: 100, total: 101, last_page: 2, from: 1, to: 100 },
        ],
        [
          'per_page=100&page=2',
          [1101],
          { current_page: 2, per_page: 100, total: 101, last_page: 2, from: 101, to: 101 },
        ],
        [
          'per_page=100&page=1000000000',
          [],
          {
            current_page: 1000000000,
            per_page: 100,
            total: 101,
            last_page: 2,
            from: null,
            to: null,
          },
        ],
      ];
      for (const [query, data, meta] of cases) {
        const res = await api.get(`/expenses?${query}`, key);
        assert.equal(res.status, 200, `${query}: ${res.body}`);
        assert.deepEqual(ids(res), data, query);
        assert.deepEqual(res.json.meta, meta, query);
      }
    });

    it('answers an empty first page with last_page 1 when nothing matches', async (t) => {
      const { api, key } = await serve(t, dialect, twoCompanies());
      const res = await api.get('/expenses', key);
      assert.equal(res.status, 200, res.body);
      assert.deepEqual(res.json, {
        data: [],
        meta: { current_page: 1, per_page: 25, total: 0, last_page: 1, from: null, to: null },
      });
    });
  });

  describe('parameter validation', () => {
    const hundredIds = Array.from({ length: 100 }, (_, i) => i + 1).join(',');

    it('refuses each bad parameter with a 422 naming it', async (t) => {
      const { api, key } = await serve(t, dialect, twoCompanies());
      const cases: Array<[query: string, parameter: string, message: string]> = [
        ['status=open', 'status', EXPENSE_STATUSES_MESSAGE],
        ['status=PAID', 'status', EXPENSE_STATUSES_MESSAGE],
        ['status=', 'status', EXPENSE_STATUSES_MESSAGE],
        ['status=paid,', 'status', EXPENSE_STATUSES_MESSAGE],
        ['status=paid,,pending', 'status', EXPENSE_STATUSES_MESSAGE],
        ['status=paid&status=pending', 'status', 'must be given once, not 2 times'],
        ['category_id=0', 'category_id', ID_LIST_MESSAGE],
        ['category_id=-1', 'category_id', ID_LIST_MESSAGE],
        ['category_id=abc', 'category_id', ID_LIST_MESSAGE],
        ['category_id=1.5', 'category_id', ID_LIST_MESSAGE],
        ['category_id=1,', 'category_id', ID_LIST_MESSAGE],
        ['category_id=', 'category_id', ID_LIST_MESSAGE],
        [`category_id=${hundredIds},101`, 'category_id', ID_LIST_MESSAGE],
        ['employee_id=1,x', 'employee_id', ID_LIST_MESSAGE],
        ['employee_id=12,%2010', 'employee_id', ID_LIST_MESSAGE],
        ['category_id=0x1', 'category_id', ID_LIST_MESSAGE],
        [
          'category_id=1,9007199254740993',
          'category_id',
          'must hold ids of at most 9007199254740991',
        ],
        [
          'employee_id=9007199254740992',
          'employee_id',
          'must hold ids of at most 9007199254740991',
        ],
        ['from=2026-02-30', 'from', DATE_MESSAGE],
        ['from=2026-13-01', 'from', DATE_MESSAGE],
        ['from=2026-3-1', 'from', DATE_MESSAGE],
        ['from=0000-01-01', 'from', DATE_MESSAGE],
        ['to=01/03/2026', 'to', DATE_MESSAGE],
        ['to=2026-03-01T00:00:00Z', 'to', DATE_MESSAGE],
        ['to=', 'to', DATE_MESSAGE],
        [
          'updated_since=2026-03-01',
          'updated_since',
          'must be an RFC 3339 timestamp with an offset, e.g. 2026-03-01T00:00:00Z',
        ],
        [
          'updated_since=2026-03-01T00:00:00',
          'updated_since',
          'must be an RFC 3339 timestamp with an offset, e.g. 2026-03-01T00:00:00Z',
        ],
        // An unencoded + reads as a space: the message says how to send it.
        ...['2026-03-01T03:00:00+03:00', '2026-03-01T03:00:00.5+03:00'].map(
          (since): [string, string, string] => [
            `updated_since=${since}`,
            'updated_since',
            "must be an RFC 3339 timestamp with an offset, e.g. 2026-03-01T00:00:00Z (a + in a URL's query reads as a space: write it %2B)",
          ],
        ),
        [
          'updated_since=2026-03-01 03:00',
          'updated_since',
          'must be an RFC 3339 timestamp with an offset, e.g. 2026-03-01T00:00:00Z',
        ],
        ...['title', '--amount', '+amount', 'Amount', 'amount,id', ''].map(
          (sort): [string, string, string] => [`sort=${sort}`, 'sort', SORT_MESSAGE],
        ),
        ...['0', '-1', '1.5', 'abc', '', '9007199254740992', ...NOT_PLAIN_NUMBERS].map(
          (page): [string, string, string] => [
            `page=${page}`,
            'page',
            'must be an integer from 1 to 9007199254740991 in plain decimal digits',
          ],
        ),
        ...['0', '101', 'x', '2.5', ...NOT_PLAIN_NUMBERS].map(
          (perPage): [string, string, string] => [
            `per_page=${perPage}`,
            'per_page',
            'must be an integer from 1 to 100 in plain decimal digits',
          ],
        ),
        [`search=${'a'.repeat(101)}`, 'search', 'must be at most 100 characters'],
      ];
      for (const [query, parameter, message] of cases) {
        assertProblem(
          await api.get(`/expenses?${query}`, key),
          validationFailed([parameter, message]),
          query,
        );
      }
    });

    it('names every bad parameter of one request', async (t) => {
      const { api, key } = await serve(t, dialect, twoCompanies());
      const res = await api.get('/expenses?per_page=0&status=open&from=2026-02-30&sort=title', key);
      assertProblem(
        res,
        validationFailed(
          ['status', EXPENSE_STATUSES_MESSAGE],
          ['from', DATE_MESSAGE],
          ['sort', SORT_MESSAGE],
          ['per_page', 'must be an integer from 1 to 100 in plain decimal digits'],
        ),
      );
    });

    it('refuses from after to, and an updated_since outside the years 0001–9999 in UTC', async (t) => {
      const { api, key } = await serve(t, dialect, twoCompanies());
      assertProblem(
        await api.get('/expenses?from=2026-03-02&to=2026-03-01', key),
        validationFailed(['from', 'must not be after to'], ['to', 'must not be before from']),
      );
      assertProblem(
        await api.get('/expenses?updated_since=9999-12-31T23:59:59-14:00', key),
        validationFailed([
          'updated_since',
          'must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z',
        ]),
      );
    });

    it('refuses a search whose percent-encoded bytes are not UTF-8, and keeps a stray % literal', async (t) => {
      const { api, key } = await serve(t, dialect, twoCompanies());
      const notUtf8 = validationFailed([
        'search',
        'must be UTF-8 text: its percent-encoded bytes are not UTF-8',
      ]);
      // A cut-off é, bytes of Latin-1, a UTF-16 surrogate, an overlong `/`: each would otherwise be
      // searched as the literal text `caf%C3`.
      for (const value of ['caf%C3', '%FF%FE', 'caf%E9', '%ED%A0%80', '%C0%AF', 'ok%20caf%C3']) {
        assertProblem(await api.get(`/expenses?search=${value}`, key), notUtf8);
      }
      // Named alongside a bad parameter of its own schema, and under an encoded name.
      assertProblem(
        await api.get('/expenses?per_page=0&s%65arch=%FF', key),
        validationFailed(
          ['per_page', 'must be an integer from 1 to 100 in plain decimal digits'],
          ['search', 'must be UTF-8 text: its percent-encoded bytes are not UTF-8'],
        ),
      );
      // Unknown parameters stay ignored, whatever their bytes.
      assert.equal((await api.get('/expenses?x=%FF', key)).status, 200);
    });

    it('accepts the limits themselves and ignores unknown parameters', async (t) => {
      const { api, key } = await serve(t, dialect, [...twoCompanies(), expense(1, 1, 10, 3)]);
      for (const query of [
        `category_id=${hundredIds}`,
        `employee_id=${hundredIds}`,
        `search=${encodeURIComponent('é'.repeat(100))}`,
        'from=2024-02-29&to=2024-02-29',
        'per_page=100&page=1000000000',
        'status=pending,approved,rejected,paid,cancelled',
      ]) {
        const res = await api.get(`/expenses?${query}`, key);
        assert.equal(res.status, 200, `${query}: ${res.body}`);
      }
      const plain = await api.get('/expenses', key);
      const withUnknown = await api.get('/expenses?foo=bar&include=salary&limit=1', key);
      assert.equal(withUnknown.status, 200, withUnknown.body);
      assert.equal(withUnknown.body, plain.body);
    });
  });
});

describeEachDialect('GET /expenses/{id}', (dialect) => {
  it('serves every list field plus items in order and receipt URLs', async (t) => {
    const { api, key } = await serve(t, dialect, shapeRecords());
    const res = await api.get('/expenses/500', key);
    assert.equal(res.status, 200, res.body);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.deepEqual(res.json, {
      data: {
        ...taxiWithReceipt(INJECTED_BASE),
        items: [
          { name: 'Ride', quantity: 1, price: 1200.5 },
          { name: 'Toll', quantity: 2, price: 25 },
          { name: 'Waiting', quantity: 0.5, price: 0 },
        ],
        receipt: {
          url: `${INJECTED_BASE}/expenses/500/receipt`,
          processed_url: `${INJECTED_BASE}/expenses/500/receipt?variant=processed`,
          original_url: `${INJECTED_BASE}/expenses/500/receipt?variant=original`,
        },
      },
    });
  });

  it('serves receipt null and no items for an expense without them', async (t) => {
    const { api, key } = await serve(t, dialect, shapeRecords());
    const res = await api.get('/expenses/501', key);
    assert.equal(res.status, 200, res.body);
    assert.deepEqual(res.json, { data: { ...rejectedLunch, items: [], receipt: null } });
  });

  it('builds receipt URLs from PUBLIC_BASE_URL when it is configured', async (t) => {
    const { api, key } = await serve(t, dialect, shapeRecords(), { publicBaseUrl: PUBLIC_BASE });
    const res = await api.get('/expenses/500', key);
    assert.equal(res.status, 200, res.body);
    assert.equal(res.json.data.receipt_url, `${PUBLIC_BASE}/expenses/500/receipt`);
    assert.deepEqual(res.json.data.receipt, {
      url: `${PUBLIC_BASE}/expenses/500/receipt`,
      processed_url: `${PUBLIC_BASE}/expenses/500/receipt?variant=processed`,
      original_url: `${PUBLIC_BASE}/expenses/500/receipt?variant=original`,
    });
  });

  it('embeds an inactive category', async (t) => {
    const { api, key } = await serve(t, dialect, [
      ...twoCompanies(),
      category(1, 4, { name: 'Retired category', active: false }),
      expense(1, 500, 10, 4),
    ]);
    const res = await api.get('/expenses/500', key);
    assert.equal(res.status, 200, res.body);
    assert.deepEqual(res.json.data.category, { id: 4, name: 'Retired category' });
  });

  it('answers 404 for a missing id, another company’s id and a malformed id alike', async (t) => {
    const { api, key } = await serve(t, dialect, shapeRecords());
    const missing = await api.get('/expenses/999', key);
    assertProblem(missing, NOT_FOUND);
    for (const id of ['600', 'abc', '0', '-1', '1.5', '1e3', '%20500', '9999999999999999']) {
      const res = await api.get(`/expenses/${id}`, key);
      assert.equal(res.status, 404, `${id}: ${res.body}`);
      assert.equal(res.headers['content-type'], missing.headers['content-type'], id);
      assert.equal(res.body, missing.body, id);
    }
  });
});

describeEachDialect('GET /expenses/{id}/receipt', (dialect) => {
  it('answers 404 not_found for a missing expense or another company’s', async (t) => {
    const { api, key } = await serve(t, dialect, shapeRecords());
    const missing = await api.get('/expenses/999/receipt', key);
    assertProblem(missing, NOT_FOUND);
    // 600 (company 2) has a receipt; 502 is company 2's without one.
    await api.load([expense(2, 502, 20, 21)]);
    for (const path of [
      '/expenses/600/receipt',
      '/expenses/600/receipt?variant=original',
      '/expenses/502/receipt',
      '/expenses/abc/receipt',
      '/expenses/0/receipt',
    ]) {
      const res = await api.get(path, key);
      assert.equal(res.status, 404, `${path}: ${res.body}`);
      assert.equal(res.body, missing.body, path);
    }
  });

  it('answers 404 receipt_not_found for the company’s expense without a receipt', async (t) => {
    const { api, key } = await serve(t, dialect, shapeRecords());
    for (const query of ['', '?variant=processed', '?variant=original']) {
      assertProblem(
        await api.get(`/expenses/501/receipt${query}`, key),
        {
          type: '/docs/errors#receipt_not_found',
          title: 'Receipt not found',
          status: 404,
          detail: 'This expense has no receipt image.',
          code: 'receipt_not_found',
        },
        query,
      );
    }
  });

  it('refuses an unknown variant with a 422 naming variant', async (t) => {
    const { api, key } = await serve(t, dialect, shapeRecords());
    for (const path of [
      '/expenses/500/receipt?variant=bogus',
      '/expenses/501/receipt?variant=ORIGINAL',
      '/expenses/999/receipt?variant=',
    ]) {
      assertProblem(
        await api.get(path, key),
        validationFailed(['variant', 'must be processed or original']),
        path,
      );
    }
  });
});

describeEachDialect('GET /expense-categories', (dialect) => {
  it('lists the company’s active categories by id, max_amount a number or null', async (t) => {
    const { api, key } = await serve(t, dialect, [
      company(1),
      category(1, 7, { name: 'Office', description: 'Supplies', max_amount: 19.99 }),
      category(1, 2, { name: 'Old', active: false }),
      category(1, 1, { name: 'Travel', max_amount: '5000.00' }),
      category(1, 5, { name: 'Meals', requires_receipt: false, max_amount: null }),
      company(2),
      category(2, 3, { name: 'Other company' }),
    ]);
    const res = await api.get('/expense-categories', key);
    assert.equal(res.status, 200, res.body);
    assert.deepEqual(res.json, {
      data: [
        { id: 1, name: 'Travel', description: null, requires_receipt: true, max_amount: 5000 },
        { id: 5, name: 'Meals', description: null, requires_receipt: false, max_amount: null },
        {
          id: 7,
          name: 'Office',
          description: 'Supplies',
          requires_receipt: true,
          max_amount: 19.99,
        },
      ],
    });
    assert.ok(res.body.includes('"max_amount":19.99}'), res.body);
  });

  it('lists nothing for a company without active categories', async (t) => {
    const { api, key } = await serve(t, dialect, [company(1), category(1, 1, { active: false })]);
    const res = await api.get('/expense-categories', key);
    assert.equal(res.status, 200, res.body);
    assert.deepEqual(res.json, { data: [] });
  });
});

describeEachDialect('expenses.read scope', (dialect) => {
  it('refuses every expense operation to a key without expenses.read', async (t) => {
    const { api } = await serve(t, dialect, shapeRecords());
    const leavesOnly = await api.createKey(1, { scopes: ['leaves.read'] });
    // The scope is checked before parameters and before the record is looked up.
    for (const path of [
      '/expenses',
      '/expenses?page=0',
      '/expenses/500',
      '/expenses/999',
      '/expenses/500/receipt',
      '/expenses/501/receipt?variant=bogus',
      '/expense-categories',
    ]) {
      const res = await api.get(path, leavesOnly);
      assertProblem(res, insufficientScope('expenses.read'), path);
      assert.equal(
        res.headers['www-authenticate'],
        'Bearer error="insufficient_scope", scope="expenses.read"',
        path,
      );
    }
  });

  it('serves every expense operation to a key with only expenses.read', async (t) => {
    const { api } = await serve(t, dialect, shapeRecords());
    const expensesOnly = await api.createKey(1, { scopes: ['expenses.read'] });
    for (const path of ['/expenses', '/expenses/500', '/expense-categories']) {
      const res = await api.get(path, expensesOnly);
      assert.equal(res.status, 200, `${path}: ${res.body}`);
    }
    const receipt = await api.get('/expenses/501/receipt', expensesOnly);
    assert.equal(receipt.json.code, 'receipt_not_found', receipt.body);
  });
});
