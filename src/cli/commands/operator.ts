/** Operator commands: companies, users, products, grants, keys, and seed files. */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { listApiKeys } from '../../adapters/db/repositories/api-keys.ts';
import { listCompanies } from '../../adapters/db/repositories/companies.ts';
import { listProducts } from '../../adapters/db/repositories/products.ts';
import { listUsers, updateUser } from '../../adapters/db/repositories/users.ts';
import { NotFoundError } from '../../domain/errors.ts';
import {
  createApiKey,
  createCompany,
  createProduct,
  createUser,
  grantProductToUser,
  revokeKey,
  setProductArchived,
} from '../../domain/provisioning.ts';
import { applySeed, parseSeedFile } from '../../domain/seed.ts';
import { CliError, printJson, withServices } from '../io.ts';

const role = (value: string) => {
  if (value !== 'admin' && value !== 'agent') throw new CliError('--role must be admin or agent', 2);
  return value;
};
const integer = (value: string) => {
  if (!/^\d+$/.test(value)) throw new CliError(`not a whole number: ${value}`, 2);
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

  const user = program.command('user').description('Users of a company');
  user
    .command('create')
    .description('Create a user')
    .requiredOption('--company <id>', 'company id')
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
    .requiredOption('--company <id>', 'company id')
    .action((o: { company: string }) =>
      withServices(async (s) => (await listUsers(s.database.db, o.company)).forEach(printJson)),
    );
  for (const [name, active] of [
    ['activate', true],
    ['deactivate', false],
  ] as const) {
    user
      .command(`${name} <userId>`)
      .description(`${name[0]?.toUpperCase()}${name.slice(1)} a user (an inactive user's keys stop working)`)
      .requiredOption('--company <id>', 'company id')
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
    .requiredOption('--company <id>', 'company id')
    .requiredOption('--name <name>', 'product name (unique in the company)')
    .option('--archived', 'create it archived')
    .action((o: { company: string; name: string; archived?: boolean }) =>
      withServices(async (s) =>
        printJson(await createProduct(s.database.db, o.company, o.name, o.archived ? 'archived' : 'active')),
      ),
    );
  product
    .command('list')
    .requiredOption('--company <id>', 'company id')
    .action((o: { company: string }) =>
      withServices(async (s) => (await listProducts(s.database.db, o.company)).forEach(printJson)),
    );
  for (const [name, archived] of [
    ['archive', true],
    ['unarchive', false],
  ] as const) {
    product
      .command(`${name} <productId>`)
      .requiredOption('--company <id>', 'company id')
      .action((productId: string, o: { company: string }) =>
        withServices(async (s) =>
          printJson(await setProductArchived(s.database.db, o.company, integer(productId), archived)),
        ),
      );
  }

  program
    .command('grant')
    .description('Let a (non-admin) user see a product')
    .requiredOption('--company <id>', 'company id')
    .requiredOption('--product <id>', 'product id')
    .requiredOption('--user <id>', 'user id')
    .action((o: { company: string; product: string; user: string }) =>
      withServices(async (s) => {
        await grantProductToUser(s.database.db, o.company, integer(o.product), o.user);
        printJson({ granted: true, product_id: integer(o.product), user_id: o.user });
      }),
    );

  const key = program.command('key').description('API keys');
  key
    .command('create')
    .description('Issue a key; it is printed once and only its hash is kept')
    .requiredOption('--company <id>', 'company id')
    .requiredOption('--user <id>', 'user id')
    .option('--scopes <list>', 'comma-separated: calls, handoff:write', 'calls')
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
    .requiredOption('--company <id>', 'company id')
    .action((o: { company: string }) =>
      withServices(async (s) => (await listApiKeys(s.database.db, o.company)).forEach(printJson)),
    );
  key
    .command('revoke <keyId>')
    .requiredOption('--company <id>', 'company id')
    .action((keyId: string, o: { company: string }) =>
      withServices(async (s) => printJson(await revokeKey(s.database.db, o.company, keyId))),
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
