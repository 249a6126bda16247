/** `cqs serve` and `cqs migrate`. */
import type { Command } from 'commander';
import { makeEmbeddedTemplate } from '../../adapters/db/database.ts';
import { DirectoryLockedError } from '../../adapters/db/directory-lock.ts';
import { ListenError, type RunningService, startService } from '../../server.ts';
import { CliError, configFromEnv, withServices } from '../io.ts';

/** Adds the serve and migrate commands. */
export function registerServeCommands(program: Command): void {
  program
    .command('serve')
    .description('Migrate the database and serve the API (PORT, HOST, DATA_DIR, DATABASE_URL, …)')
    .option(
      '--no-bootstrap',
      'do not create the demo company on a new, empty database (env CQS_BOOTSTRAP=false)',
    )
    .action(async (options: { bootstrap: boolean }) => {
      const config = configFromEnv(options.bootstrap ? {} : { CQS_BOOTSTRAP: 'false' });
      // The handlers come before the start: a signal without one kills the process at once, and one that
      // came while the service started (even after its "Server listening", which tools wait for) did, with
      // the embedded database open. A stop asked for meanwhile now waits for the start, then stops the
      // service; a second signal of the same kind still kills the process.
      let running: RunningService | undefined;
      let asked: NodeJS.Signals | undefined;
      const stop = (service: RunningService, signal: NodeJS.Signals) => {
        service.app.log.info({ signal }, 'stopping');
        service.stop().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      for (const signal of ['SIGINT', 'SIGTERM'] as const) {
        process.once(signal, () => {
          asked ??= signal;
          if (running) stop(running, signal);
        });
      }
      try {
        running = await startService(config);
      } catch (error) {
        if (error instanceof DirectoryLockedError) throw new CliError(error.message, 3);
        if (error instanceof ListenError) throw new CliError(error.message, 1);
        throw error;
      }
      if (asked) stop(running, asked);
    });

  program
    .command('embedded-template')
    .description(
      'Make the archive of an empty embedded database that a first start loads instead of running initdb (npm install runs it)',
    )
    .option('--force', 'make it again even when it exists')
    .action(async (options: { force?: boolean }) => {
      process.stdout.write(`${await makeEmbeddedTemplate(options.force === true)}\n`);
    });

  program
    .command('prepare')
    .description(
      "Make the embedded database's archive and TypeBox's bundle, and fill Node's compile cache with the service's modules (npm install runs it)",
    )
    .action(async () => {
      process.stdout.write(`${await makeEmbeddedTemplate(false)}\n`);
      const { makeTypeboxBundle } = await import('../typebox-bundle.ts');
      try {
        process.stdout.write(`${await makeTypeboxBundle()}\n`);
      } catch (error) {
        // Only memory is lost: without the bundle, cqs loads TypeBox's own modules.
        const why = error instanceof Error ? error.message : String(error);
        process.stderr.write(`cqs: TypeBox's bundle was not made (${why}); cqs loads its modules instead\n`);
      }
      const { fillCompileCache } = await import('../compile-cache.ts');
      process.stdout.write(`compile cache: ${fillCompileCache(process.env)} modules\n`);
    });

  program
    .command('migrate')
    .description('Apply the database migrations and exit')
    .action(async () => {
      await withServices(async () => {
        process.stdout.write('migrations applied\n');
      });
    });
}
