/** Operator commands: companies, users, products, grants, keys, and seed files. */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { listApiKeys } from '../../adapters/db/repositories/api-keys.ts';
import { listCompanies } from '../../adapters/db/repositories/companies.ts';
import { listProducts } from '../../adapters/db/repositories/products.ts';
import { listUsers, updateUser } from '../../adapters/db/repositories/users.ts';
import { SCOPES } from '../../domain/access/api-keys.ts';
import {
  createApiKey,
  createCompany,
  createProduct,
  createUser,
  grantProductToUser,
  revokeKey,
  setProductArchived,
} from '../../domain/access/provisioning.ts';
import { applySeed, parseSeedFile } from '../../domain/access/seed.ts';
import { updateRetention } from '../../domain/calls/retention.ts';
import { NotFoundError } from '../../domain/errors.ts';
import { UUID } from '../../domain/uuid.ts';
import { CliError, printJson, withServices } from '../io.ts';
import { formatTable } from '../output.ts';

const role = (value: string) => {
  if (value !== 'admin' && value !== 'agent') throw new CliError('--role must be admin or agent', 2);
  return value;
};
const LISTED_BY: Record<string, string> = {
  company: 'cqs company list',
  user: 'cqs user list --company ID',
  key: 'cqs key list --company ID',
};
/**
 * Checks an id before any query (the database would refuse it with its SQL in the message), as a parser of
 * its argument or option: Commander runs it before the action, so a typo is refused even while `cqs serve`
 * holds the embedded database.
 */
const uuid = (what: string, name: string) => (value: string) => {
  if (!UUID.test(value)) {
    throw new CliError(
      `${what}: ${JSON.stringify(value)} is not a ${name} id; ${name} ids are UUIDs ` +
        `(like 0b9e4c52-5d1f-4a8e-9c3a-2f6d7e8a1b90), as \`${LISTED_BY[name]}\` prints them`,
      2,
    );
  }
  return value.toLowerCase();
};
/** A product id: a whole number the database can hold (its ids are bigint; past 2^53 none is made). */
const integer = (value: string) => {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)))
    throw new CliError(`${JSON.stringify(value)} is not a product id (a whole number)`, 2);
  return Number(value);
};

/** The range (1 to the maximum) is the domain's rule; here only "is it a number". */
const retentionDays = (value: string) => {
  if (!/^\d+$/.test(value))
    throw new CliError(
      `--retention-days: ${JSON.stringify(value)} is not a whole number of days, nor none`,
      2,
    );
  return Number(value);
};

/** Adds the operator commands. */
export function registerOperatorCommands(program: Command): void {
  const company = program.command('company').description('Companies (tenants)');
  company
    .command('create <name>')
    .description('Create a company')
    .action((name: string) => withServices(async (s) => printJson(await createCompany(s.database.db, name))));
  company
    .command('list')
    .description('List companies')
    .action(() => withServices(async (s) => (await listCompanies(s.database.db)).forEach(printJson)));
  company
    .command('update')
    .description('Change a company')
    .argument('<id>', 'company id (a UUID)', uuid('ID', 'company'))
    .requiredOption(
      '--retention-days <days|none>',
      'erase calls whose start_time is older than this many days (daily sweep); none: keep them',
      // Checked as it is parsed; `none` is a string here (Commander turns a parser's null into '').
      (value: string) => (['none', 'clear'].includes(value) ? 'none' : retentionDays(value)),
    )
    .action((companyId: string, o: { retentionDays: number | 'none' }) =>
      withServices(async (s) => {
        const days = o.retentionDays === 'none' ? null : o.retentionDays;
        printJson(await updateRetention({ db: s.database.db }, companyId, days));
      }),
    );

  const user = program.command('user').description('Users of a company');
  user
    .command('create')
    .description('Create a user')
    .requiredOption('--company <id>', 'company id (a UUID)', uuid('--company', 'company'))
    .requiredOption('--email <email>', 'email (matched case-insensitively; need not be unique)')
    .requiredOption('--role <role>', 'admin or agent', role)
    .option('--inactive', 'create the user inactive')
    .action((o: { company: string; email: string; role: 'admin' | 'agent'; inactive?: boolean }) =>
      withServices(async (s) =>
        printJson(
          await createUser(s.database.db, o.company, { email: o.email, role: o.role, active: !o.inactive }),
        ),
      ),
    );
  user
    .command('list')
    .requiredOption('--company <id>', 'company id (a UUID)', uuid('--company', 'company'))
    .action((o: { company: string }) =>
      withServices(async (s) => (await listUsers(s.database.db, o.company)).forEach(printJson)),
    );
  for (const [name, active] of [
    ['activate', true],
    ['deactivate', false],
  ] as const) {
    user
      .command(name)
      .description(`${name[0]?.toUpperCase()}${name.slice(1)} a user (an inactive user's keys stop working)`)
      .argument('<userId>', 'user id (a UUID)', uuid('USER_ID', 'user'))
      .requiredOption('--company <id>', 'company id (a UUID)', uuid('--company', 'company'))
      .action((userId: string, o: { company: string }) =>
        withServices(async (s) => {
          const row = await updateUser(s.database.db, o.company, userId, { active });
          if (!row) throw new NotFoundError(`user ${userId} not found`);
          printJson(row);
        }),
      );
  }

  const product = program.command('product').description('Products of a company');
  product
    .command('create')
    .requiredOption('--company <id>', 'company id (a UUID)', uuid('--company', 'company'))
    .requiredOption('--name <name>', 'product name (unique in the company)')
    .option('--archived', 'create it archived')
    .action((o: { company: string; name: string; archived?: boolean }) =>
      withServices(async (s) =>
        printJson(await createProduct(s.database.db, o.company, o.name, o.archived ? 'archived' : 'active')),
      ),
    );
  product
    .command('list')
    .requiredOption('--company <id>', 'company id (a UUID)', uuid('--company', 'company'))
    .action((o: { company: string }) =>
      withServices(async (s) => (await listProducts(s.database.db, o.company)).forEach(printJson)),
    );
  for (const [name, archived] of [
    ['archive', true],
    ['unarchive', false],
  ] as const) {
    product
      .command(name)
      .argument('<productId>', 'product id', integer)
      .requiredOption('--company <id>', 'company id (a UUID)', uuid('--company', 'company'))
      .action((productId: number, o: { company: string }) =>
        withServices(async (s) =>
          printJson(await setProductArchived(s.database.db, o.company, productId, archived)),
        ),
      );
  }

  program
    .command('grant')
    .description('Let a (non-admin) user see a product')
    .requiredOption('--company <id>', 'company id (a UUID)', uuid('--company', 'company'))
    .requiredOption('--product <id>', 'product id', integer)
    .requiredOption('--user <id>', 'user id (a UUID)', uuid('--user', 'user'))
    .action((o: { company: string; product: number; user: string }) =>
      withServices(async (s) => {
        await grantProductToUser(s.database.db, o.company, o.product, o.user);
        printJson({ granted: true, product_id: o.product, user_id: o.user });
      }),
    );

  const key = program.command('key').description('API keys');
  key
    .command('create')
    .description('Issue a key; it is printed once and only its hash is kept')
    .requiredOption('--company <id>', 'company id (a UUID)', uuid('--company', 'company'))
    .requiredOption('--user <id>', 'user id (a UUID)', uuid('--user', 'user'))
    .option('--scopes <list>', `comma-separated: ${SCOPES.join(', ')}`, 'calls')
    .action((o: { company: string; user: string; scopes: string }) =>
      withServices(async (s) => {
        const issued = await createApiKey(
          s.database.db,
          o.company,
          o.user,
          o.scopes.split(',').filter(Boolean),
        );
        printJson({ id: issued.id, key: issued.key, scopes: issued.scopes, user_id: issued.userId });
      }),
    );
  key
    .command('list')
    .description('List the keys of a company: id, prefix, user, scopes, created and revoked times')
    .requiredOption('--company <id>', 'company id (a UUID)', uuid('--company', 'company'))
    .option('--json', 'one JSON object per line instead of a table')
    .action((o: { company: string; json?: boolean }) =>
      withServices(async (s) => {
        const [keys, people] = await Promise.all([
          listApiKeys(s.database.db, o.company),
          listUsers(s.database.db, o.company),
        ]);
        const emailOf = new Map(people.map((u) => [u.id, u.email]));
        if (o.json) {
          for (const k of keys) printJson({ ...k, userEmail: emailOf.get(k.userId) ?? null });
          return;
        }
        const when = (d: Date | null) => (d ? d.toISOString().replace(/\.\d{3}Z$/, 'Z') : '-');
        process.stdout.write(
          formatTable(
            ['ID', 'PREFIX', 'USER', 'SCOPES', 'CREATED', 'REVOKED'],
            keys.map((k) => [
              k.id,
              k.keyPrefix,
              emailOf.get(k.userId) ?? k.userId,
              k.scopes.join(','),
              when(k.createdAt),
              when(k.revokedAt),
            ]),
          ),
        );
      }),
    );
  key
    .command('revoke')
    .description('Revoke a key, named by its id (cqs key list) or by the key itself (cqs_…)')
    .argument('<keyIdOrKey>', 'key id (a UUID) or the key itself', (value: string) =>
      value.startsWith('cqs_') ? value : uuid('KEY_ID', 'key')(value),
    )
    .requiredOption('--company <id>', 'company id (a UUID)', uuid('--company', 'company'))
    .action((named: string, o: { company: string }) =>
      withServices(async (s) => printJson(await revokeKey(s.database.db, o.company, named))),
    );

  program
    .command('seed <file>')
    .description('Provision companies, users, products, grants and keys from a JSON file (idempotent)')
    .action(async (file: string) => {
      let data: unknown;
      try {
        data = JSON.parse(await readFile(file, 'utf8'));
      } catch (error) {
        throw new CliError(`cannot read ${file}: ${(error as Error).message}`, 2);
      }
      const seed = (() => {
        try {
          return parseSeedFile(data);
        } catch (error) {
          throw new CliError(`${file}: ${(error as Error).message}`, 2);
        }
      })();
      await withServices(async (s) => {
        const report = await applySeed(s.database.db, seed);
        for (const line of report.created) process.stdout.write(`created ${line}\n`);
        process.stdout.write(`${report.created.length} changed, ${report.unchanged} unchanged\n`);
        for (const k of report.newKeys) {
          process.stdout.write(
            `new API key for ${k.user} of ${k.company} (${k.scopes.join(',')}): ${k.key}\n`,
          );
        }
      });
    });
}
