/** Shared pieces of the CLI: configuration loading, opening services, output. */

import { CliError } from './output.ts';

export { CliError, printJson } from './output.ts';

import { DirectoryLockedError } from '../adapters/db/directory-lock.ts';
import { type Config, ConfigError, loadConfig } from '../config/config.ts';
import { findDomainError } from '../domain/errors.ts';
import { closeServices, openServices } from '../server.ts';
import type { Services } from '../services.ts';

/** Reads the configuration from the environment, or fails with a message naming the bad variables. */
export function configFromEnv(overrides: Record<string, string> = {}): Config {
  try {
    return loadConfig({ ...process.env, ...overrides });
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(error.message, 2);
    throw error;
  }
}

/** Runs `fn` with open (migrated) services and closes them after. */
export async function withServices<T>(fn: (services: Services) => Promise<T>): Promise<T> {
  const config = configFromEnv({ LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
  let services: Services;
  try {
    services = await openServices(config);
  } catch (error) {
    if (error instanceof DirectoryLockedError) throw new CliError(error.message, 3);
    throw error;
  }
  try {
    return await fn(services);
  } catch (error) {
    const domain = findDomainError(error);
    if (domain) throw new CliError(domain.message, 4);
    // A driver error's message (Drizzle's "Failed query: …") carries the SQL: say only what the database said.
    const cause = (error as { cause?: unknown }).cause;
    if (error instanceof Error && error.message.startsWith('Failed query') && cause instanceof Error) {
      throw new CliError(`the database refused the request: ${cause.message}`, 1);
    }
    throw error;
  } finally {
    await closeServices(services);
  }
}
