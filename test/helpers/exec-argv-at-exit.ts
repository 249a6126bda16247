/**
 * Loaded with `--import` into a `cqs` child: writes the Node and V8 flags the process ended with (after any
 * re-execution of itself) to the file CQS_EXEC_ARGV_FILE names, as JSON.
 */
import { writeFileSync } from 'node:fs';

const file = process.env.CQS_EXEC_ARGV_FILE;
if (file) process.on('exit', () => writeFileSync(file, JSON.stringify(process.execArgv)));
