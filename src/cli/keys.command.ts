import { type Command, InvalidArgumentError } from 'commander';
import {
  DEFAULT_PER_HOUR,
  DEFAULT_PER_MINUTE,
  isValidKeyName,
  KEY_NAME_RULE,
  MAX_RATE,
  parseScopes,
  SCOPES,
  type Scope,
} from '../keys/scopes.ts';
import { parseCount, parseId, print, table, withDatabase } from './context.ts';
import { KEYS_HELP } from './help.ts';

/** Loaded when a command runs, not for every `cdapi` (see main.ts). */
const keysService = () => import('../services/keys.service.ts');

interface CreateOptions {
  company: number;
  name: string;
  scopes: Scope[];
  perMinute: number;
  perHour: number;
  json?: boolean;
}

function scopesOption(value: string): Scope[] {
  try {
    return parseScopes(value);
  } catch (error) {
    throw new InvalidArgumentError(`${(error as Error).message}.`);
  }
}

function nameOption(value: string): string {
  if (!isValidKeyName(value)) {
    throw new InvalidArgumentError(`${KEY_NAME_RULE}.`);
  }
  return value;
}

/** What the operator may not have meant: a key that cannot work yet, or a limit that hides another. */
function creationCautions(options: CreateOptions, companyActive: boolean): string[] {
  const cautions: string[] = [];
  if (!companyActive) {
    cautions.push(
      `company ${options.company} is inactive: the key is refused (403 company_inactive) until \`cdapi companies activate ${options.company}\``,
    );
  }
  if (options.perHour < options.perMinute) {
    cautions.push(
      `--per-hour ${options.perHour} is below --per-minute ${options.perMinute}: no more than ${options.perHour} requests get through in any minute either`,
    );
  }
  return cautions;
}

export function registerKeyCommands(program: Command): void {
  const keys = program
    .command('keys')
    .description('create, list and revoke API keys')
    .addHelpText('after', KEYS_HELP.group);

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
    .addHelpText('after', KEYS_HELP.command.create)
    .action(async (options: CreateOptions) => {
      const { createKey } = await keysService();
      const created = await withDatabase(
        ({ handle }) =>
          createKey(handle.db, {
            companyId: options.company,
            name: options.name,
            scopes: options.scopes,
            perMinute: options.perMinute,
            perHour: options.perHour,
          }),
        { quick: true },
      );
      const { id, company_id, name, scopes } = created.key;
      print(options.json, { id, company_id, name, scopes, key: created.raw }, () =>
        [
          `Created key ${id} "${name}" for company ${company_id} (scopes: ${scopes.join(', ')}).`,
          'Store it now; it is not shown again:',
          created.raw,
        ].join('\n'),
      );
      // On stderr, so that --json output stays one document.
      for (const caution of creationCautions(options, created.company.active)) {
        process.stderr.write(`cdapi: note: ${caution}\n`);
      }
    });

  keys
    .command('list')
    .description('list a company’s keys (the short prefix only, never the key)')
    .requiredOption('--company <id>', 'company id', parseId('--company'))
    .option('--json', 'machine-readable output')
    .addHelpText('after', KEYS_HELP.command.list)
    .action(async (options: { company: number; json?: boolean }) => {
      const { listKeys } = await keysService();
      const rows = await withDatabase(({ handle }) => listKeys(handle.db, options.company), {
        quick: true,
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
    .addHelpText('after', KEYS_HELP.command.revoke)
    .action(async (keyId: number, options: { json?: boolean }) => {
      const { revokeKey } = await keysService();
      const key = await withDatabase(({ handle }) => revokeKey(handle.db, keyId), { quick: true });
      print(options.json, key, () => `Key ${keyId} "${key.name}" revoked at ${key.revoked_at}.`);
    });
}
