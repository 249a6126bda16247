/** What the HTTP layer and the worker are given: configuration and the open adapters. */

import type { Redis } from 'ioredis';
import type { Database } from './adapters/db/database.ts';
import type { Storage } from './adapters/storage/storage.ts';
import type { Config } from './config/config.ts';

/** The service's dependencies, made once at start and passed in. */
export interface Services {
  config: Config;
  database: Database;
  storage: Storage;
  /** Shared state between processes (rate limits), when REDIS_URL is set. */
  redis?: Redis;
}
