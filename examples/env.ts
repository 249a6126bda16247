/** The examples' settings: CQS_URL and CQS_API_KEY (and what each example names) from the environment. */
import { CqsClient } from '../packages/client/src/index.ts'; // in your project: from '@cqs/client'

/** A variable the example needs, or a message saying which one is missing. */
export function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    process.stderr.write(`set ${name}\n`);
    process.exit(2);
  }
  return value;
}

/** Prints how to run the example (without a stack trace) and exits 2, when an argument is missing. */
export function usage(line: string): never {
  process.stderr.write(`usage: ${line}\n`);
  process.exit(2);
}

/** A client for CQS_URL with CQS_API_KEY. */
export function clientFromEnv(): CqsClient {
  return new CqsClient({ baseUrl: required('CQS_URL'), apiKey: required('CQS_API_KEY') });
}
