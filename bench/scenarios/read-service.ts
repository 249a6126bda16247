/** The services of the read scenarios: one per database that BENCH_READ_DB lists, all running at once. */
import { createScratchDatabase } from '../lib/postgres.ts';
import { type BenchService, startBenchService } from '../lib/service.ts';
import type { DbKind } from '../lib/settings.ts';
import type { BenchContext } from './scenario.ts';

/** How entry names call a database. */
export function dbLabel(db: DbKind): string {
  return db === 'postgres' ? 'PostgreSQL' : 'embedded db';
}

/** A service of a read scenario, or why there is none for that database. */
export type ReadService = { db: DbKind; service: BenchService } | { db: DbKind; skipped: string };

/** Starts a service on each database of the settings (PostgreSQL only when reachable). */
export async function startReadServices(
  context: BenchContext,
  name: string,
): Promise<{ services: ReadService[]; stop(): Promise<void> }> {
  const { settings } = context;
  const started: ReadService[] = [];
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s();
  };
  try {
    for (const db of settings.readDbs) {
      if (db === 'embedded') {
        const service = await startBenchService({
          name: `${name}-embedded`,
          cpuProfileDir: settings.cpuProfileDir,
        });
        stops.push(service.stop);
        started.push({ db, service });
      } else if (!context.postgres) {
        started.push({ db, skipped: 'skipped: PostgreSQL not reachable' });
      } else {
        const scratch = await createScratchDatabase(settings.postgresUrl, name);
        stops.push(scratch.drop);
        const service = await startBenchService({
          name: `${name}-postgres`,
          databaseUrl: scratch.url,
          cpuProfileDir: settings.cpuProfileDir,
        });
        stops.push(service.stop);
        started.push({ db, service });
      }
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { services: started, stop };
}
