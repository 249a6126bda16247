/** What the HTTP layer and the worker are given: configuration and the open adapters. */
import type { Database } from './adapters/db/database.ts';
import type { Metrics } from './adapters/metrics/metrics.ts';
import type { ChangeNotifier } from './adapters/notify/notifier.ts';
import type { JobQueue } from './adapters/queue/queue.ts';
import type { SharedRedis } from './adapters/redis/shared-redis.ts';
import type { Storage } from './adapters/storage/storage.ts';
import type { Config } from './config/config.ts';
import type { PrincipalCache } from './domain/access/principal-cache.ts';
import type { FinalRecordCache } from './domain/handoffs/final-cache.ts';

/** The service's dependencies, made once at start and passed in. */
export interface Services {
  config: Config;
  database: Database;
  storage: Storage;
  /** Shared state between processes (rate limits), when REDIS_URL is set. */
  redis?: SharedRedis;
  /** Change notifications of handoff records (LISTEN/NOTIFY), for long polls. */
  notifier: ChangeNotifier;
  /** Final handoff records by `<company_id>:<id>`; they never change, and an erased one is forgotten by every process. */
  handoffCache: FinalRecordCache;
  /** The Prometheus metrics, when METRICS_PORT is set. */
  metrics?: Metrics;
  /** Principals by key hash, forgotten on every process when access changes. */
  principalCache: PrincipalCache;
  /** The job queue on the same database: work after an upload runs there, never in the request. */
  queue: JobQueue;
}
