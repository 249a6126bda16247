/** The service of the read scenarios, on the database BENCH_READ_DB names. */
import { createScratchDatabase } from '../lib/postgres.ts';
import { type BenchService, startBenchService } from '../lib/service.ts';
import { type BenchContext, SkipScenario } from './scenario.ts';

/** How the read scenarios name their database in entry names. */
export function readDbLabel(context: { settings: { readDb: string } }): string {
  return context.settings.readDb === 'postgres' ? 'PostgreSQL' : 'embedded db';
}

/** Starts the service for a read scenario; `stop` also drops its database. */
export async function startReadService(context: BenchContext, name: string): Promise<BenchService> {
  const { settings } = context;
  if (settings.readDb === 'embedded') {
    return startBenchService({ name, cpuProfileDir: settings.cpuProfileDir });
  }
  if (!context.postgres) throw new SkipScenario('PostgreSQL not reachable');
  const db = await createScratchDatabase(settings.postgresUrl, name);
  try {
    const service = await startBenchService({
      name,
      databaseUrl: db.url,
      cpuProfileDir: settings.cpuProfileDir,
    });
    return {
      ...service,
      stop: async () => {
        await service.stop();
        await db.drop();
      },
    };
  } catch (error) {
    await db.drop();
    throw error;
  }
}
