/**
 * Reading calls back from the command line, through @cqs/client only: `calls list` (filters as flags,
 * NDJSON with --json, a table otherwise), `calls get`, `calls download` (streamed to a file, progress on
 * stderr) and `calls delete`. They need a key with `calls:read` (and `calls:delete` to erase).
 */
import { extname } from 'node:path';
import type { Command } from 'commander';
import type { CallItem, ListCallsFilters } from '../../../packages/client/src/index.ts';
import {
  type ConnectionFlags,
  clientFrom,
  connectionOptions,
  EXIT,
  progressReporter,
  runIntegrator,
} from '../integrator-io.ts';
import { CliError, plainCell, printJson } from '../output.ts';

interface ListFlags extends ConnectionFlags {
  agentEmail?: string;
  productId?: number;
  conversationId?: string;
  state?: 'created' | 'live' | 'stopped';
  media?: 'none' | 'pending' | 'uploaded' | 'ready' | 'rejected' | 'expired';
  startTimeGte?: number;
  startTimeLt?: number;
  tag?: string[];
  limit?: number;
  pageSize?: number;
}

const wholeNumber = (flag: string) => (value: string) => {
  if (!/^\d+$/.test(value)) throw new CliError(`${flag} must be a whole number: ${value}`, EXIT.usage);
  return Number(value);
};
const epochSeconds = (flag: string) => (value: string) => {
  if (!/^\d+(\.\d+)?$/.test(value)) throw new CliError(`${flag} must be epoch seconds: ${value}`, EXIT.usage);
  return Number(value);
};
const oneOf =
  <T extends string>(flag: string, allowed: readonly T[]) =>
  (value: string): T => {
    if (!(allowed as readonly string[]).includes(value)) {
      throw new CliError(`${flag} must be one of ${allowed.join(', ')}: ${value}`, EXIT.usage);
    }
    return value as T;
  };
const collect = (value: string, previous: string[] = []) => [...previous, value];

/** The list's filters from the flags (names as the API's parameters). */
function filtersOf(flags: ListFlags): ListCallsFilters {
  const filters: ListCallsFilters = {};
  if (flags.agentEmail !== undefined) filters.agent_email = flags.agentEmail;
  if (flags.productId !== undefined) filters.product_id = flags.productId;
  if (flags.conversationId !== undefined) filters.conversation_id = flags.conversationId;
  if (flags.state !== undefined) filters.state = flags.state;
  if (flags.media !== undefined) filters.media = flags.media;
  if (flags.startTimeGte !== undefined) filters.start_time_gte = flags.startTimeGte;
  if (flags.startTimeLt !== undefined) filters.start_time_lt = flags.startTimeLt;
  if (flags.tag !== undefined) filters.tag = flags.tag;
  return filters;
}

const COLUMNS = [
  ['ID', 36],
  ['START (UTC)', 20],
  ['STATE', 7],
  ['MEDIA', 8],
  ['AGENT', 28],
  // As wide as the UUID the service makes a conversation_id of when the client sends none.
  ['CONVERSATION', 36],
  ['TAGS', 0],
] as const;

/** One table row: the columns padded, the last one (tags) as it is. */
function row(cells: string[]): string {
  const width = (i: number) => COLUMNS[i]?.[1] ?? 0;
  return `${cells
    .map(plainCell)
    .map((cell, i) => (width(i) > 0 ? cell.padEnd(width(i)) : cell))
    .join('  ')}\n`;
}

function tableRow(call: CallItem): string {
  const start = new Date(call.start_time * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const tags = call.tags.map((t) => `${t.key}=${String(t.value)}`).join(',');
  return row([
    call.id,
    start,
    call.state,
    call.media?.status ?? '-',
    call.agent.email,
    call.conversation_id,
    tags,
  ]);
}

async function list(flags: ListFlags): Promise<void> {
  if (flags.limit === 0) return;
  const client = clientFrom(flags);
  const pageSize = flags.pageSize ?? (flags.limit !== undefined ? Math.min(flags.limit, 1000) : undefined);
  let printed = 0;
  if (!flags.json) process.stdout.write(row(COLUMNS.map(([name]) => name)));
  for await (const call of client.listCalls(filtersOf(flags), pageSize !== undefined ? { pageSize } : {})) {
    process.stdout.write(flags.json ? `${JSON.stringify(call)}\n` : tableRow(call));
    printed += 1;
    if (flags.limit !== undefined && printed >= flags.limit) break;
  }
}

/** The file a download goes to without -o: the call's id with the extension of the uploaded file. */
async function defaultOutput(id: string, flags: ConnectionFlags): Promise<string> {
  const call = await clientFrom(flags).getCall(id);
  const latestReady = call.uploads.find((u) => u.status === 'ready');
  return `${id}${extname(latestReady?.filename ?? '') || '.bin'}`;
}

/** Adds `calls list`, `calls get`, `calls download` and `calls delete` to the `calls` command. */
export function registerCallReadCommands(calls: Command): void {
  connectionOptions(calls.command('list'))
    .description('List calls, newest first, following every page (needs calls:read); --json prints NDJSON')
    .option('--agent-email <email>', 'calls of this agent (any case)')
    .option('--product-id <id>', 'calls of this product', wholeNumber('--product-id'))
    .option('--conversation-id <id>', 'calls with this conversation_id')
    .option('--state <state>', 'created, live or stopped', oneOf('--state', ['created', 'live', 'stopped']))
    .option(
      '--media <status>',
      "the latest upload's status: none, pending, uploaded, ready, rejected or expired",
      oneOf('--media', ['none', 'pending', 'uploaded', 'ready', 'rejected', 'expired']),
    )
    .option(
      '--start-time-gte <epoch>',
      'start_time at or after (epoch seconds)',
      epochSeconds('--start-time-gte'),
    )
    .option('--start-time-lt <epoch>', 'start_time before (epoch seconds)', epochSeconds('--start-time-lt'))
    .option('--tag <key[:value]>', 'has the tag (with this value, written as text); repeatable', collect)
    .option('--limit <n>', 'print at most n calls', wholeNumber('--limit'))
    .option('--page-size <n>', 'calls per request, 1-1000', wholeNumber('--page-size'))
    .action((flags: ListFlags) => runIntegrator(flags, () => list(flags)));

  connectionOptions(calls.command('get <id>'))
    .description('Print one call: transcript, tags, metadata, uploads, linked handoff ids (needs calls:read)')
    .action((id: string, flags: ConnectionFlags) =>
      runIntegrator(flags, async () => {
        const call = await clientFrom(flags).getCall(id);
        if (flags.json) printJson(call);
        else process.stdout.write(`${JSON.stringify(call, null, 2)}\n`);
      }),
    );

  connectionOptions(calls.command('download <id>'))
    .description("Download the call's latest ready recording, with progress on stderr (needs calls:read)")
    .option('-o, --output <file>', 'where to write it (default: ID plus the uploaded file’s extension)')
    .action((id: string, flags: ConnectionFlags & { output?: string }) =>
      runIntegrator(flags, async () => {
        const output = flags.output ?? (await defaultOutput(id, flags));
        const progress = progressReporter('downloaded');
        const result = await clientFrom(flags).downloadRecording(id, output, {
          onProgress: ({ received, total }) => progress({ sent: received, total }),
        });
        if (flags.json)
          printJson({ id, path: result.path, size: result.size, content_type: result.contentType });
        else process.stdout.write(`saved ${result.size} bytes (${result.contentType}) to ${result.path}\n`);
      }),
    );

  connectionOptions(calls.command('delete <id>'))
    .description('Erase a call and everything of it, recordings included (needs calls:delete, an admin key)')
    .action((id: string, flags: ConnectionFlags) =>
      runIntegrator(flags, async () => {
        await clientFrom(flags).deleteCall(id);
        if (flags.json) printJson({ deleted: id });
        else process.stdout.write(`deleted ${id}\n`);
      }),
    );
}
