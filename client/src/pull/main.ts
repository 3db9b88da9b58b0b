import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ApiError } from '../errors.ts';
import { baseUrlProblem, refusedForGood } from '../transport.ts';
import type { Resource } from '../types.ts';
import { lineProgress, terminalProgress } from './progress.ts';
import { pull } from './pull.ts';

const USAGE = `Usage: CDAPI_KEY=cdk_… cdapi-pull --base-url URL --out FILE.sqlite [options]

Mirrors a company's data into a SQLite file through the change feed: the first run reads
everything, later runs only what changed (deletions included), an interrupted run resumes.

  --base-url URL     the API base, e.g. https://api.example.com/api/company/v1
  --out FILE         the SQLite file (created when missing)
  --csv DIR          also write one CSV file per table into DIR
  --csv-escape-formulas
                     in those files, begin text a spreadsheet would run as a formula
                     (=, +, -, @, tab, CR first) with ' (for files opened in Excel)
  --receipts DIR     download each expense's receipt (processed variant) into DIR
  --resources LIST   comma list of employee, leave_type, leave, expense_category, expense
                     (default: every resource the key may read)
  --page-size N      change-feed entries a request, 1-1000 (default 1000)
  --compress         ask for compressed answers (the default unless --base-url names this
                     machine: localhost, 127.x.x.x or [::1], where compressing only costs)
  --no-compress      ask for uncompressed answers: faster on a fast LAN too
  --json             print {"upserts","deletes","cursor","seconds"} on stdout
  -h, --help         this text

The key is read from the CDAPI_KEY environment variable, never from the command line.
Exit codes: 0 done, 1 failed (the reason on stderr), 2 bad usage, 130 or 143 interrupted
by SIGINT or SIGTERM (the next run goes on from the last page written).`;

const RESOURCES: readonly Resource[] = [
  'employee',
  'leave_type',
  'leave',
  'expense_category',
  'expense',
];

interface Output {
  write(text: string): boolean;
  isTTY?: boolean;
}

class UsageError extends Error {}

function parseResources(list: string): Resource[] {
  const names = list.split(',').map((name) => name.trim());
  for (const name of names)
    if (!RESOURCES.includes(name as Resource))
      throw new UsageError(
        `--resources: unknown resource "${name}" (one of ${RESOURCES.join(', ')})`,
      );
  // One spelling a set: the feed's order, each once (the file records the set it holds).
  return RESOURCES.filter((resource) => names.includes(resource));
}

function parsePageSize(text: string): number {
  // Plain digits without leading zeros, as the cdapi command's numbers (`010` is refused).
  const size = /^[1-9]\d*$/.test(text) ? Number(text) : Number.NaN;
  if (!(size >= 1 && size <= 1000))
    throw new UsageError('--page-size: a whole number from 1 to 1000, in plain digits');
  return size;
}

/** Runs cdapi-pull; returns the exit code (0 done, 1 failed, 2 bad usage). */
export async function main(
  argv: string[],
  env: NodeJS.ProcessEnv,
  stdout: Output,
  stderr: Output,
): Promise<number> {
  let out: string | undefined;
  try {
    // parseArgs would print the unexpected argument, a key that then sits in a CI log.
    // An argument holding a word shaped like a key, or the start of one, wherever it sits (a
    // pasted `Authorization: Bearer cdk_…` header, a list): a file named cdk_backup.sqlite
    // is not one (a key has no dot, slash or hyphen); a whole key (38 characters after `cdk_`)
    // is one wherever it sits, a file name included.
    if (
      argv.some(
        (arg) =>
          /(^|[^0-9A-Za-z_])cdk_[0-9A-Za-z]*(?![0-9A-Za-z_./\\-])/.test(arg) ||
          /cdk_[0-9A-Za-z]{38}/.test(arg),
      )
    )
      throw new UsageError(
        'an API key is never taken as an argument (so it is not printed here): set CDAPI_KEY',
      );
    const { values, tokens } = parseArgs({
      args: argv,
      tokens: true,
      options: {
        'base-url': { type: 'string' },
        out: { type: 'string' },
        csv: { type: 'string' },
        'csv-escape-formulas': { type: 'boolean' },
        receipts: { type: 'string' },
        resources: { type: 'string' },
        'page-size': { type: 'string' },
        compress: { type: 'boolean' },
        'no-compress': { type: 'boolean' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    });
    if (values.help) {
      stdout.write(`${USAGE}\n`);
      return 0;
    }
    // parseArgs keeps the last of a repeated value: `--out a --out b` would write b unasked.
    const given = new Set<string>();
    for (const token of tokens) {
      if (token.kind !== 'option' || token.value === undefined) continue;
      if (given.has(token.name))
        throw new UsageError(`--${token.name} is given twice: give it once`);
      given.add(token.name);
    }
    if (!values['base-url']) throw new UsageError('--base-url is required');
    const problem = baseUrlProblem(values['base-url']);
    if (problem === 'not http') {
      throw new UsageError(
        `--base-url must be an http:// or https:// URL, such as http://127.0.0.1:8080/api/company/v1 (not ${values['base-url']})`,
      );
    }
    if (problem === 'credentials') {
      throw new UsageError(
        '--base-url must not hold a user name or password (not shown here): the key goes in CDAPI_KEY',
      );
    }
    if (problem === 'query') {
      throw new UsageError(
        '--base-url must not hold a query (?) or a fragment (#): the API base, such as http://127.0.0.1:8080/api/company/v1',
      );
    }
    if (values.compress && values['no-compress'])
      throw new UsageError('--compress and --no-compress: give one of them');
    out = values.out;
    if (!out) throw new UsageError('--out is required');
    if (values['csv-escape-formulas'] && !values.csv)
      throw new UsageError('--csv-escape-formulas: give --csv DIR too');
    const apiKey = env.CDAPI_KEY;
    if (!apiKey)
      throw new UsageError('set CDAPI_KEY to the API key (it is never taken as an argument)');
    const summary = await pull({
      baseUrl: values['base-url'],
      apiKey,
      out,
      csvDir: values.csv,
      csvEscapeFormulas: values['csv-escape-formulas'],
      receiptsDir: values.receipts,
      resources: values.resources === undefined ? undefined : parseResources(values.resources),
      pageSize: values['page-size'] === undefined ? 1000 : parsePageSize(values['page-size']),
      compress:
        values.compress ?? (values['no-compress'] ? false : !onThisMachine(values['base-url'])),
      progress: stderr.isTTY ? terminalProgress(stderr) : lineProgress(stderr),
    });
    stdout.write(
      values.json
        ? `${JSON.stringify(summary)}\n`
        : `${summary.upserts} upserts, ${summary.deletes} deletes in ${summary.seconds} s; cursor ${summary.cursor}\n`,
    );
    return 0;
  } catch (error) {
    const usage =
      error instanceof UsageError ||
      // A DOMException (a timeout, an abort) has a numeric code.
      String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS');
    const reason =
      error instanceof ApiError
        ? `${error.message}${error.requestId ? ` (request ${error.requestId})` : ''}`
        : // A file left behind holds the pages written (a first run that fails removes its own).
          describeFailure(error as Error, out !== undefined && existsSync(out));
    stderr.write(`cdapi-pull: ${reason}\n`);
    if (usage) stderr.write('Run cdapi-pull --help for the options.\n');
    return usage ? 2 : 1;
  }
}

/**
 * Whether `baseUrl` names this machine (a loopback address), where compressed answers only cost
 * both sides CPU: pulling the bench company so took 133 s instead of 90 (docs/performance.md).
 */
export function onThisMachine(baseUrl: string): boolean {
  const host = new URL(baseUrl).hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    /^127\.\d+\.\d+\.\d+$/.test(host) ||
    host === '::1'
  );
}

/**
 * A failure's message, with the reason fetch keeps in `cause` ("fetch failed" alone says
 * nothing), and where a run again starts when the output file holds pages (`resumable`).
 */
function describeFailure(error: Error, resumable: boolean): string {
  const cause = error.cause instanceof Error ? error.cause : null;
  const again = resumable ? 'run again to go on from the last page written' : 'run again';
  if (error.name === 'TimeoutError') {
    return `the service did not answer in time, on every attempt (each may take 30 s); ${again}`;
  }
  if (error.name === 'SyntaxError') {
    return `an answer of the service is not JSON (${error.message}): is --base-url the API's base, and nothing in between (a proxy's or a portal's page)?`;
  }
  if (error.name === 'TypeError' && error.message === 'terminated') {
    return `the connection was cut while an answer arrived, on every attempt; ${again}`;
  }
  if (refusedForGood(error) && cause?.message === 'redirect count exceeded') {
    return "a receipt's signed URL redirects round and round (twenty redirects): the receipt store, or a proxy in between, sends it back to itself";
  }
  if (refusedForGood(error)) {
    return 'cannot reach the service: fetch refuses the port of --base-url (one of the ports browsers block, such as 6000); serve the API on another port';
  }
  if (error.name === 'TypeError' && error.message === 'fetch failed' && cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ERR_SSL_WRONG_VERSION_NUMBER') {
      return 'cannot reach the service: it does not speak TLS (https:// in --base-url for an http:// service?)';
    }
    // One line: OpenSSL's reasons end in a line break.
    return `cannot reach the service: ${cause.message.trim().replace(/\s*\n\s*/g, '; ')}; once it answers, ${again}`;
  }
  return error.message;
}
