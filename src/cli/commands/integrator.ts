/** Integrator commands that talk to a running service through @cqs/client: uploads, tags, handoffs. */
import { extname } from 'node:path';
import type { Command } from 'commander';
import { CqsTimeoutError, type Tag } from '../../../packages/client/src/index.ts';
import { fileSource } from '../../../packages/client/src/node.ts';
import {
  type ConnectionFlags,
  clientFrom,
  connectionOptions,
  EXIT,
  progressReporter,
  runIntegrator,
} from '../integrator-io.ts';
import { CliError, printJson, tsvLine } from '../output.ts';
import { collectTag } from '../tags.ts';
import { registerCallReadCommands } from './integrator-calls.ts';

/** Video-only extensions and their type (spec 4.1); other extensions take the audio path without a type. */
const VIDEO_TYPES: Record<string, string> = {
  '.mov': 'video/quicktime',
  '.flv': 'video/x-flv',
  '.wmv': 'video/x-ms-wmv',
  '.mpeg': 'video/mpeg',
  '.mpg': 'video/mpeg',
  '.3gpp': 'video/3gpp',
};

const channels = (value: string) => {
  const roles = value.split(',').map((r) => r.trim());
  const ok = roles.length === 2 && roles.includes('agent') && roles.includes('customer');
  if (!ok) throw new CliError('--channels must be agent,customer or customer,agent', EXIT.usage);
  return roles as ('agent' | 'customer')[];
};
const productId = (value: string) => {
  if (!/^\d+$/.test(value)) throw new CliError(`--product must be a whole number: ${value}`, EXIT.usage);
  return Number(value);
};

interface UploadFlags extends ConnectionFlags {
  agent: string;
  product: number;
  tag?: Tag[];
  conversationId?: string;
  channels?: ('agent' | 'customer')[];
  contentType?: string;
}

/** Adds `calls upload`, `calls tag`, the read commands of `calls`, `handoff get`, `handoff wait` and `products`. */
export function registerIntegratorCommands(program: Command): void {
  const calls = program.command('calls').description('Calls on a running service (uses the API)');
  connectionOptions(calls.command('upload <file>'))
    .description('Create a call and upload its recording; waits until it is verified (ready or rejected)')
    .requiredOption('--agent <email>', 'email of the agent')
    .requiredOption('--product <id>', 'product id', productId)
    .option('--tag <key=value:type>', 'a tag (type string, integer or boolean); repeatable', collectTag)
    .option('--conversation-id <id>', 'your id of the call')
    .option('--channels <roles>', 'stereo roles left,right: agent,customer or customer,agent', channels)
    .option('--content-type <type>', 'MIME type (default: inferred from the extension by the service)')
    .action((file: string, flags: UploadFlags) => runIntegrator(flags, () => upload(file, flags)));

  connectionOptions(calls.command('tag'))
    .description('Add tags to a call')
    .requiredOption('--conversation-id <id>', 'your id of the call')
    .requiredOption('--agent <email>', 'email of the agent')
    .requiredOption(
      '--tag <key=value:type>',
      'a tag (type string, integer or boolean); repeatable',
      collectTag,
    )
    .action((flags: ConnectionFlags & { conversationId: string; agent: string; tag: Tag[] }) =>
      runIntegrator(flags, async () => {
        const body = { conversation_id: flags.conversationId, agent_email: flags.agent, tags: flags.tag };
        const result = await clientFrom(flags).addTags(body);
        if (flags.json) printJson(result);
        else process.stdout.write(`tagged ${flags.conversationId} (${flags.tag.length} tags)\n`);
      }),
    );

  registerCallReadCommands(calls);

  const handoff = program.command('handoff').description('Call-handoff records (uses the API)');
  connectionOptions(handoff.command('get <id>'))
    .description('Print a call-handoff record as it is now')
    .action((id: string, flags: ConnectionFlags) =>
      runIntegrator(flags, async () => printRecord(await clientFrom(flags).getHandoff(id), flags)),
    );
  connectionOptions(handoff.command('wait <id>'))
    .description('Wait until a call-handoff record is final and print it (exit 7 on timeout)')
    .option('--timeout <seconds>', 'give up after this many seconds', Number)
    .action((id: string, flags: ConnectionFlags & { timeout?: number }) =>
      runIntegrator(flags, async () => {
        if (flags.timeout !== undefined && !(flags.timeout >= 0)) {
          throw new CliError('--timeout must be a number of seconds', EXIT.usage);
        }
        const controller = new AbortController();
        const onSignal = () => controller.abort(new CqsTimeoutError('interrupted'));
        process.once('SIGINT', onSignal);
        try {
          const record = await clientFrom(flags).waitForFinalHandoff(id, {
            signal: controller.signal,
            ...(flags.timeout !== undefined ? { deadline: Date.now() + flags.timeout * 1000 } : {}),
          });
          printRecord(record, flags);
        } finally {
          process.off('SIGINT', onSignal);
        }
      }),
    );

  connectionOptions(program.command('products'))
    .description('List the products the key sees (uses the API)')
    .action((flags: ConnectionFlags) =>
      runIntegrator(flags, async () => {
        const products = await clientFrom(flags).listProducts();
        if (flags.json) printJson({ products });
        else for (const p of products) process.stdout.write(tsvLine([String(p.id), p.status, p.name]));
      }),
    );
}

async function upload(file: string, flags: UploadFlags): Promise<void> {
  const client = clientFrom(flags);
  const source = await fileSource(file).catch((error: Error) => {
    throw new CliError(`cannot read ${file}: ${error.message}`, EXIT.usage);
  });
  const contentType = flags.contentType ?? VIDEO_TYPES[extname(file).toLowerCase()];
  const uploading = client.uploadRecording(
    {
      agent_email: flags.agent,
      product_id: flags.product,
      filename: source.filename,
      body: source,
      ...(contentType ? { contentType } : {}),
      ...(flags.conversationId ? { conversation_id: flags.conversationId } : {}),
      ...(flags.tag ? { tags: flags.tag } : {}),
      ...(flags.channels
        ? { speaker: { separation: 'channels' as const, channel_map: flags.channels } }
        : {}),
    },
    { onProgress: progressReporter() },
  );
  // The client refuses a file that is empty or too large with a RangeError, before it makes the call.
  const { upload, status } = await uploading.catch((error: unknown) => {
    throw error instanceof RangeError ? new CliError(error.message, EXIT.usage) : error;
  });
  if (flags.json) printJson(status);
  else {
    const reason = status.reason ? ` (${status.reason})` : '';
    process.stdout.write(
      `upload ${upload.upload_id} of ${upload.conversation_id}: ${status.status}${reason}\n`,
    );
  }
  if (status.status !== 'ready') process.exitCode = EXIT.rejected;
}

function printRecord(record: { final: boolean }, flags: ConnectionFlags): void {
  if (flags.json) printJson(record);
  else process.stdout.write(`${JSON.stringify(record, null, 2)}\n`);
}
