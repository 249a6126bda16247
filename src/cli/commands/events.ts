/** `cqs events tail` and `cqs webhooks …`: the event feed and webhook endpoints through @cqs/client. */
import type { Command } from 'commander';
import { describeFailure } from '../../../packages/client/src/errors.ts';
import { type ConnectionFlags, clientFrom, connectionOptions, runIntegrator } from '../integrator-io.ts';
import { printJson, tsvLine } from '../output.ts';

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** Adds `events tail` and `webhooks create|list|test|deliveries`. */
export function registerEventCommands(program: Command): void {
  const events = program.command('events').description('The event feed (uses the API)');
  connectionOptions(events.command('tail'))
    .description('Print events as they come, one JSON object a line, from the oldest kept (or --from) on')
    .option('--type <type>', 'only this event type; repeatable', collect)
    .option('--from <cursor>', 'start after this cursor (a next_cursor printed on stderr earlier)')
    .action((flags: ConnectionFlags & { type?: string[]; from?: string }) =>
      runIntegrator(flags, async () => {
        const controller = new AbortController();
        const stop = () => controller.abort();
        process.once('SIGINT', stop);
        try {
          const feed = clientFrom(flags).events({
            ...(flags.from ? { after: flags.from } : {}),
            ...(flags.type ? { types: flags.type } : {}),
            signal: controller.signal,
            // The feed is followed through an outage; a person watching is told why nothing comes.
            onRetry: (error, retry, delayMs) =>
              process.stderr.write(
                `${describeFailure(error)}; retry ${retry} in ${(delayMs / 1000).toFixed(1)} s\n`,
              ),
          });
          for await (const page of feed) {
            for (const event of page.events) process.stdout.write(`${JSON.stringify(event)}\n`);
            // The cursor to resume from goes to stderr, so stdout stays one event a line.
            process.stderr.write(`cursor ${page.next_cursor}\n`);
          }
        } finally {
          process.off('SIGINT', stop);
        }
      }),
    );

  const webhooks = program.command('webhooks').description('Webhook endpoints (uses the API)');
  connectionOptions(webhooks.command('create <url>'))
    .description('Create an endpoint; prints it with its secret (shown only now)')
    .option('--type <type>', 'only this event type; repeatable (default: every type)', collect)
    .option('--description <text>', 'a note for people')
    .action((url: string, flags: ConnectionFlags & { type?: string[]; description?: string }) =>
      runIntegrator(flags, async () => {
        const created = await clientFrom(flags).createWebhook({
          url,
          ...(flags.type ? { types: flags.type as never } : {}),
          ...(flags.description ? { description: flags.description } : {}),
        });
        if (flags.json) printJson(created);
        else process.stdout.write(`${created.id}\t${created.url}\nsecret ${created.secret}\n`);
      }),
    );
  connectionOptions(webhooks.command('list'))
    .description('List the endpoints')
    .action((flags: ConnectionFlags) =>
      runIntegrator(flags, async () => {
        const list = await clientFrom(flags).listWebhooks();
        if (flags.json) printJson({ webhooks: list });
        else {
          for (const w of list) {
            const types = w.types?.join(',') ?? '*';
            process.stdout.write(tsvLine([w.id, w.enabled ? 'enabled' : 'disabled', types, w.url]));
          }
        }
      }),
    );
  connectionOptions(webhooks.command('test <id>'))
    .description('Send a webhook.test message to an endpoint')
    .action((id: string, flags: ConnectionFlags) =>
      runIntegrator(flags, async () => {
        const sent = await clientFrom(flags).testWebhook(id);
        if (flags.json) printJson(sent);
        else process.stdout.write(`sent ${sent.event_id}\n`);
      }),
    );
  connectionOptions(webhooks.command('deliveries <id>'))
    .description('The delivery log of an endpoint, newest first')
    .action((id: string, flags: ConnectionFlags) =>
      runIntegrator(flags, async () => {
        const list = await clientFrom(flags).listWebhookDeliveries(id);
        if (flags.json) printJson({ deliveries: list });
        else {
          for (const d of list) {
            const last = d.attempts.at(-1);
            const answer = last ? (last.status_code ?? last.error ?? '') : '';
            process.stdout.write(
              tsvLine([d.id, d.event_type, d.status, String(d.attempts.length), String(answer)]),
            );
          }
        }
      }),
    );
}
