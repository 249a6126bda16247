/** What the HTTP layer and the worker are given: configuration and the open adapters. */
import type { Database } from './adapters/db/database.ts';
import type { Storage } from './adapters/storage/storage.ts';
import type { Config } from './config/config.ts';

/** The service's dependencies, made once at start and passed in. */
export interface Services {
  config: Config;
  database: Database;
  storage: Storage;
}
