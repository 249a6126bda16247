/** The `cqs` command line: serving, migrating, operator and integrator commands. */
import { Command } from 'commander';
import { registerIntegratorCommands } from './commands/integrator.ts';
import { registerOperatorCommands } from './commands/operator.ts';
import { registerServeCommands } from './commands/serve.ts';
import { CliError } from './io.ts';

const program = new Command('cqs')
  .description('Call Quality Service: run the service and provision companies, users, products and keys.')
  .showHelpAfterError();
registerServeCommands(program);
registerOperatorCommands(program);
registerIntegratorCommands(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`cqs: ${message}\n`);
  process.exitCode = error instanceof CliError ? error.exitCode : 1;
}
