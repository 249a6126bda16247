/**
 * Events and webhooks under faults (PostgreSQL): the service is SIGKILLed during a burst of changes with
 * deliveries in flight; a receiver is down for the first part of a run; a receiver answers 500 to every
 * tenth request. Every committed change's event must reach the receiver at least once (a duplicate carries
 * the same webhook-id and body), and a reader following the pull feed's cursor, across the crash, must see
 * each event exactly once and in commit order.
 */
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createPostgresDatabase } from '../test/helpers/harness.ts';
import { freePort } from '../test/helpers/process.ts';
import { type Receiver, startReceiver } from '../test/helpers/receiver.ts';
import {
  call,
  figure,
  rand,
  type SeededKeys,
  type Served,
  SHORT,
  seedCompany,
  serve,
  tempDir,
} from './lib.ts';

/** Seconds the receiver of the second run stays down. */
const DOWN_S = SHORT ? 10 : 120;
/** Changes of the burst before the kill, and of the every-tenth-500 run. */
const BURST_WORKERS = 6;
const FLAKY_CHANGES = SHORT ? 150 : 1000;
/** How long a run may take to deliver everything once nothing stops it (leases after a kill included). */
const SETTLE_MS = SHORT ? 90_000 : 300_000;
// Retries every second for longer than the receiver is down, so no delivery gives up before it is back.
const RETRY_SCHEDULE = ['0.5', ...Array.from({ length: DOWN_S + 60 }, () => '1')].join(',');

interface FeedEvent {
  id: string;
  type: string;
  data: { conversation_id?: string };
}

/** A change the service acknowledged, in the order its client saw the answers. */
interface Acked {
  type: 'call.created' | 'call.updated';
  conversationId: string;
}

/** A reader that follows the pull feed with its cursor for as long as it runs, across restarts. */
function followFeed(port: () => number, key: string) {
  const events: FeedEvent[] = [];
  let stopped = false;
  const done = (async () => {
    let cursor: string | undefined;
    while (!stopped) {
      const query = `limit=1000${cursor ? `&after=${cursor}` : ''}`;
      const r = await call(port(), 'GET', `/api/v1/events?${query}`, key);
      if (r.status !== 200) {
        await sleep(200); // the service is down or restarting
        continue;
      }
      const page = r.body as { events: FeedEvent[]; next_cursor: string };
      events.push(...page.events);
      cursor = page.next_cursor;
      if (page.events.length === 0) await sleep(100);
    }
  })();
  return {
    events,
    async stop() {
      stopped = true;
      await done;
    },
  };
}

/** A receiver that records which event ids it answered 2xx, answering as `status` says after `delayMs`. */
async function countingReceiver(
  status: (index: number) => number,
  delayMs: () => number,
  port?: number,
): Promise<Receiver & { delivered: Set<string>; pending: () => number; answered: Map<number, number> }> {
  const r = await startReceiver(port);
  const delivered = new Set<string>();
  const answered = new Map<number, number>();
  let pending = 0;
  r.answer = async (request, response, index) => {
    pending++;
    const delay = delayMs();
    if (delay > 0) await sleep(delay);
    const code = status(index);
    answered.set(code, (answered.get(code) ?? 0) + 1);
    response.writeHead(code).end();
    if (code < 300) delivered.add(request.json.id);
    pending--;
  };
  return Object.assign(r, { delivered, pending: () => pending, answered });
}

/** What the checks found; every count must end at 0. */
interface Findings {
  events: number;
  received: number;
  undelivered: number;
  missingFromFeed: number;
  feedDuplicates: number;
  orderViolations: number;
  phantoms: number;
  badDuplicates: number;
}

function check(feed: FeedEvent[], receiver: Awaited<ReturnType<typeof countingReceiver>>, acked: Acked[][]) {
  const ids = feed.map((e) => e.id);
  const feedIds = new Set(ids);
  // Each acknowledged change has its event, in the order its client saw the answers (a client sends its
  // next change only after the previous answer, so its changes committed in that order).
  let missingFromFeed = 0;
  let orderViolations = 0;
  for (const changes of acked) {
    let at = 0;
    for (const change of changes) {
      const found = feed.findIndex(
        (e, i) => i >= at && e.type === change.type && e.data.conversation_id === change.conversationId,
      );
      if (found >= 0) at = found + 1;
      else if (feed.some((e) => e.type === change.type && e.data.conversation_id === change.conversationId))
        orderViolations++;
      else missingFromFeed++;
    }
  }
  // Duplicates carry the same webhook-id and the same body.
  const bodies = new Map<string, string>();
  let badDuplicates = 0;
  for (const got of receiver.received) {
    if (got.headers['webhook-id'] !== got.json.id) badDuplicates++;
    const seen = bodies.get(got.json.id);
    if (seen !== undefined && seen !== got.body) badDuplicates++;
    bodies.set(got.json.id, got.body);
  }
  return {
    events: feed.length,
    received: receiver.received.length,
    undelivered: ids.filter((id) => !receiver.delivered.has(id)).length,
    missingFromFeed,
    feedDuplicates: ids.length - feedIds.size,
    orderViolations,
    phantoms: [...bodies.keys()].filter((id) => !feedIds.has(id)).length,
    badDuplicates,
  } satisfies Findings;
}

/** Polls until every event is delivered and every acknowledged change is in the feed, or the deadline. */
async function settle(
  feed: FeedEvent[],
  receiver: Awaited<ReturnType<typeof countingReceiver>>,
  acked: Acked[][],
): Promise<Findings> {
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const found = check(feed, receiver, acked);
    // A change whose event the reader has not fetched yet looks like an order violation when an earlier
    // event of the same type and call is in the feed: wait for those too (a real one lasts past the deadline).
    const settled = found.undelivered === 0 && found.missingFromFeed === 0 && found.orderViolations === 0;
    if (settled || Date.now() > deadline) return found;
    await sleep(200);
  }
}

function report(run: string, found: Findings): void {
  figure(`events_${run}_events`, found.events);
  figure(`events_${run}_requests_received`, found.received);
  figure(`events_${run}_undelivered`, found.undelivered);
  figure(`events_${run}_acknowledged_missing_from_feed`, found.missingFromFeed);
  figure(`events_${run}_feed_duplicates`, found.feedDuplicates);
  figure(`events_${run}_feed_order_violations`, found.orderViolations);
  figure(`events_${run}_delivered_not_in_feed`, found.phantoms);
  figure(`events_${run}_duplicates_with_other_id_or_body`, found.badDuplicates);
}

function assertClean(found: Findings): void {
  assert.ok(found.events > 0, 'some events were written');
  assert.deepEqual(
    { ...found, events: 0, received: 0 },
    {
      events: 0,
      received: 0,
      undelivered: 0,
      missingFromFeed: 0,
      feedDuplicates: 0,
      orderViolations: 0,
      phantoms: 0,
      badDuplicates: 0,
    },
  );
}

describe('events and webhooks under faults (PostgreSQL)', {
  skip: !process.env.TEST_DATABASE_URL,
}, () => {
  let dir: string;
  let db: Awaited<ReturnType<typeof createPostgresDatabase>>;
  let env: Record<string, string>;
  let served: Served | undefined;
  const receivers: Receiver[] = [];

  before(async () => {
    dir = await tempDir('cqs-events-');
    db = await createPostgresDatabase();
    env = {
      DATA_DIR: dir,
      DATABASE_URL: db.url,
      LOG_LEVEL: 'info', // readiness is the "Server listening" line
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_RETRY_SCHEDULE: RETRY_SCHEDULE,
      WEBHOOK_TIMEOUT: '2',
      WEBHOOK_POLL_INTERVAL: '200',
      WORKER_POLL_INTERVAL: '100',
    };
  });
  after(async () => {
    await served?.kill();
    for (const r of receivers) await r.close();
    await db?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  /** A seeded company, its product and a webhook endpoint for every type pointing at `url`. */
  async function company(name: string, url: string) {
    const keys = await seedCompany(env, dir, name);
    served ??= await serve(env);
    const port = served.port;
    const products = await call(port, 'GET', '/api/v1/product/list', keys.calls);
    const productId = (products.body as { products: { id: number }[] }).products[0]?.id ?? 0;
    const endpoint = await call(port, 'POST', '/api/v1/webhooks', keys.events, { url });
    assert.equal(endpoint.status, 201, JSON.stringify(endpoint.body));
    return { keys, productId };
  }

  /** One client's changes, one after another: creates, and add_tags to its own calls. */
  async function client(
    keys: SeededKeys,
    productId: number,
    prefix: string,
    acked: Acked[],
    more: (n: number) => boolean,
    pauseMs = 0,
  ) {
    const mine: string[] = [];
    for (let i = 0; more(i); i++) {
      if (pauseMs > 0) await sleep(pauseMs);
      const port = served?.port ?? 0;
      if (mine.length === 0 || rand(0, 2) === 0) {
        const conversationId = `${prefix}-${i}`;
        const r = await call(port, 'POST', '/api/v1/call/create', keys.calls, {
          agent_email: keys.agentEmail,
          product_id: productId,
          conversation_id: conversationId,
          tags: [{ key: 'n', type: 'integer', value: i }],
        });
        if (r.status === 200) {
          mine.push(conversationId);
          acked.push({ type: 'call.created', conversationId });
        }
      } else {
        const conversationId = mine[rand(0, mine.length)] as string;
        const r = await call(port, 'POST', '/api/v1/call/add_tags', keys.calls, {
          agent_email: keys.agentEmail,
          conversation_id: conversationId,
          tags: [{ key: `t${i}`, type: 'string', value: 'x' }],
        });
        if (r.status === 200) acked.push({ type: 'call.updated', conversationId });
      }
    }
  }

  it('kill -9 during a burst with deliveries in flight: every event delivered, the feed exact', async () => {
    const receiver = await countingReceiver(
      () => 200,
      () => rand(5, 60),
    );
    receivers.push(receiver);
    const { keys, productId } = await company('evkill', receiver.url);
    const port = () => served?.port ?? 0;
    const feed = followFeed(port, keys.events);
    const acked: Acked[][] = Array.from({ length: BURST_WORKERS }, () => []);
    let stop = false;
    const burst = Promise.all(acked.map((list, w) => client(keys, productId, `k${w}`, list, () => !stop)));
    // Kill once deliveries are flowing and some are held by the receiver, within a deadline.
    const deadline = Date.now() + 20_000;
    const burstMs = rand(1500, 3000);
    const started = Date.now();
    while (Date.now() < deadline && (Date.now() - started < burstMs || receiver.pending() === 0)) {
      await sleep(5);
    }
    const inFlight = receiver.pending();
    await served?.kill();
    stop = true;
    await burst;
    served = await serve(env);
    const restarted = Date.now();
    const found = await settle(feed.events, receiver, acked);
    const recovery = (Date.now() - restarted) / 1000;
    await sleep(500); // a late duplicate, if any, is still checked
    await feed.stop();
    const final = check(feed.events, receiver, acked);
    figure('events_kill_acknowledged_changes', acked.flat().length);
    figure('events_kill_deliveries_in_flight_at_kill', inFlight);
    figure('events_kill_seconds_to_deliver_all_after_restart', recovery.toFixed(1));
    figure(
      'events_kill_duplicate_deliveries',
      final.received - new Set(receiver.received.map((r) => r.json.id)).size,
    );
    report('kill', final);
    assert.ok(found.undelivered === 0, 'everything was delivered before the deadline');
    assertClean(final);
  });

  it(`a receiver down for the first ${DOWN_S} s gets everything once it is back`, async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/hook`;
    const { keys, productId } = await company('evdown', url);
    const feed = followFeed(() => served?.port ?? 0, keys.events);
    const acked: Acked[][] = [[]];
    const started = Date.now();
    let receiver: Awaited<ReturnType<typeof countingReceiver>> | undefined;
    // About ten changes a second while the receiver is down and for 2 s after it is back.
    const writer = client(
      keys,
      productId,
      'd',
      acked[0] as Acked[],
      () => Date.now() - started < (DOWN_S + 2) * 1000,
      100,
    );
    const paced = (async () => {
      while (Date.now() - started < DOWN_S * 1000) await sleep(100);
      receiver = await countingReceiver(
        () => 200,
        () => 0,
        port,
      );
      receivers.push(receiver);
    })();
    await Promise.all([writer, paced]);
    const back = Date.now();
    assert.ok(receiver);
    const found = await settle(feed.events, receiver, acked);
    const catchUp = (Date.now() - back) / 1000;
    await feed.stop();
    figure('events_down_seconds_down', DOWN_S);
    figure('events_down_seconds_to_deliver_all_after_back', catchUp.toFixed(1));
    report('down', check(feed.events, receiver, acked));
    assertClean(found);
  });

  it('a receiver that answers 500 to every tenth request still ends with every event', async () => {
    const receiver = await countingReceiver(
      (i) => (i % 10 === 9 ? 500 : 200),
      () => 0,
    );
    receivers.push(receiver);
    const { keys, productId } = await company('evflaky', receiver.url);
    const feed = followFeed(() => served?.port ?? 0, keys.events);
    const acked: Acked[][] = Array.from({ length: 4 }, () => []);
    let sent = 0;
    await Promise.all(
      acked.map((list, w) => client(keys, productId, `f${w}`, list, () => sent++ < FLAKY_CHANGES)),
    );
    const found = await settle(feed.events, receiver, acked);
    await feed.stop();
    figure('events_flaky_answered_500', receiver.answered.get(500) ?? 0);
    report('flaky', found);
    assert.ok((receiver.answered.get(500) ?? 0) > 0, 'some requests were answered 500');
    assertClean(found);
  });
});
