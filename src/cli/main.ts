/** The `cqs` command line: serving, migrating, operator and integrator commands. */
import { Command } from 'commander';
import { useDrizzleResolve } from './drizzle-resolve.ts';
import { CliError, USAGE_EXIT } from './output.ts';
import { useTypeboxBundle } from './typebox-bundle.ts';

/** Commands that only talk to a running service: they load the client, not the server (small memory). */
const CLIENT_ONLY = new Set(['calls', 'handoff', 'products']);

const serverSide = !CLIENT_ONLY.has(process.argv[2] ?? '');
// Every other command loads the server's modules, and most open the database: serve's V8 flags (given
// only when the isolate is made, so the process replaces its image) keep them small (heap-flags.ts).
if (serverSide) {
  const { execWithServeFlags } = await import('./heap-flags.ts');
  execWithServeFlags();
}
// Before any module imports TypeBox (the commands below are imported dynamically, after it).
useTypeboxBundle();
// Before any module imports drizzle-orm: its 423 modules would each cost a parse of its 179 kB package.json.
// The client-only commands load none of them, so they skip even the one parse the hook costs.
if (serverSide) useDrizzleResolve();

// A reader that closed the pipe (`cqs calls list --json | head -1`) has all it wanted: stop quietly. Without
// this the write's EPIPE was an unhandled 'error' event, a stack trace and exit 1.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

const program = new Command('cqs')
  .description('Call Quality Service: run the service and provision companies, users, products and keys.')
  .showHelpAfterError()
  // Commander's own usage errors (unknown option, missing argument) exit with 2, as the README says, help
  // with 0; every command made after this inherits it (the operator commands exited with 1).
  .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : USAGE_EXIT));
if (serverSide) {
  const { registerServeCommands } = await import('./commands/serve.ts');
  const { registerOperatorCommands } = await import('./commands/operator.ts');
  registerServeCommands(program);
  registerOperatorCommands(program);
}
// `cqs serve` loads neither the client commands nor the client: the client imports node:http as an ES module,
// and that import loads undici (Node's fetch), 14 MB resident in a server that never calls it.
if (process.argv[2] !== 'serve') {
  const { registerIntegratorCommands } = await import('./commands/integrator.ts');
  const { registerEventCommands } = await import('./commands/events.ts');
  registerIntegratorCommands(program);
  registerEventCommands(program);
}

try {
  await program.parseAsync(process.argv);
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`cqs: ${message}\n`);
  process.exitCode = error instanceof CliError ? error.exitCode : 1;
}
