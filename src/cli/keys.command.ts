import { type Command, InvalidArgumentError } from 'commander';
import { findCompany } from '../db/companies.queries.ts';
import { insertApiKey, listApiKeys, revokeApiKey } from '../db/keys.queries.ts';
import { generateApiKey } from '../keys/api-key.ts';
import { DEFAULT_PER_HOUR, DEFAULT_PER_MINUTE, parseScopes, SCOPES } from '../keys/scopes.ts';
import { CliError, parseCount, parseId, print, table, withDatabase } from './context.ts';

interface CreateOptions {
  company: number;
  name: string;
  scopes: string[];
  perMinute: number;
  perHour: number;
  json?: boolean;
}

const MAX_RATE = 1_000_000_000;

function scopesOption(value: string): string[] {
  try {
    return parseScopes(value);
  } catch (error) {
    throw new InvalidArgumentError(`${(error as Error).message}.`);
  }
}

function nameOption(value: string): string {
  if (value.trim() === '' || value.length > 100) {
    throw new InvalidArgumentError('must be 1 to 100 characters.');
  }
  return value;
}

export function registerKeyCommands(program: Command): void {
  const keys = program.command('keys').description('create, list and revoke API keys');

  keys
    .command('create')
    .description('create an API key and print it once (only its SHA-256 digest is stored)')
    .requiredOption('--company <id>', 'company the key reads', parseId('--company'))
    .requiredOption('--name <label>', 'label shown in /me and keys list', nameOption)
    .option('--scopes <list>', `comma-separated scopes (${SCOPES.join(', ')})`, scopesOption, [
      ...SCOPES,
    ])
    .option(
      '--per-minute <n>',
      'requests allowed in any 60 s',
      parseCount(1, MAX_RATE),
      DEFAULT_PER_MINUTE,
    )
    .option(
      '--per-hour <n>',
      'requests allowed in any 3600 s',
      parseCount(1, MAX_RATE),
      DEFAULT_PER_HOUR,
    )
    .option('--json', 'print {"id","company_id","name","scopes","key"}')
    .action(async (options: CreateOptions) => {
      const generated = generateApiKey();
      const created = await withDatabase(async ({ handle }) => {
        if (!(await findCompany(handle.db, options.company))) {
          throw new CliError(`company ${options.company} not found`);
        }
        return insertApiKey(handle.db, {
          companyId: options.company,
          name: options.name,
          prefix: generated.prefix,
          hash: generated.hash,
          scopes: options.scopes,
          perMinute: options.perMinute,
          perHour: options.perHour,
        });
      });
      const { id, company_id, name, scopes } = created;
      print(options.json, { id, company_id, name, scopes, key: generated.key }, () =>
        [
          `Created key ${id} "${name}" for company ${company_id} (scopes: ${scopes.join(', ')}).`,
          'Store it now; it is not shown again:',
          generated.key,
        ].join('\n'),
      );
    });

  keys
    .command('list')
    .description('list a company’s keys (the short prefix only, never the key)')
    .requiredOption('--company <id>', 'company id', parseId('--company'))
    .option('--json', 'machine-readable output')
    .action(async (options: { company: number; json?: boolean }) => {
      const rows = await withDatabase(async ({ handle }) => {
        if (!(await findCompany(handle.db, options.company))) {
          throw new CliError(`company ${options.company} not found`);
        }
        return listApiKeys(handle.db, options.company);
      });
      print(options.json, rows, () =>
        table(
          [
            'ID',
            'NAME',
            'PREFIX',
            'SCOPES',
            'PER MIN',
            'PER HOUR',
            'CREATED',
            'LAST USED',
            'REVOKED',
          ],
          rows.map((k) => [
            k.id,
            k.name,
            `${k.prefix}…`,
            k.scopes.join(','),
            k.per_minute,
            k.per_hour,
            k.created_at,
            k.last_used_at,
            k.revoked_at,
          ]),
        ),
      );
    });

  keys
    .command('revoke')
    .description('revoke a key: it gets 401 within 2 s on a running service')
    .argument('<key-id>', 'key id from keys list', parseId('key id'))
    .option('--json', 'machine-readable output')
    .action(async (keyId: number, options: { json?: boolean }) => {
      const key = await withDatabase(({ handle }) => revokeApiKey(handle.db, keyId));
      if (!key) throw new CliError(`key ${keyId} not found`);
      print(options.json, key, () => `Key ${keyId} "${key.name}" revoked at ${key.revoked_at}.`);
    });
}
