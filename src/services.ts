/** What the HTTP layer and the worker are given: configuration and the open adapters. */
import type { Database } from './adapters/db/database.ts';
import type { JobQueue } from './adapters/queue/queue.ts';
import type { Storage } from './adapters/storage/storage.ts';
import type { Config } from './config/config.ts';

/** The service's dependencies, made once at start and passed in. */
export interface Services {
  config: Config;
  database: Database;
  storage: Storage;
  /** The job queue on the same database: work after an upload runs there, never in the request. */
  queue: JobQueue;
}
