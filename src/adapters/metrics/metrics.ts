/**
 * Metrics for operators in the Prometheus text format (prom-client), one registry per process, served on a
 * port of their own (`METRICS_PORT`, `http/metrics-server.ts`), never on the API's. Counters move as
 * things happen (requests, upload bytes, long polls); what lives in the database (the queue, webhook
 * deliveries) is read at scrape time, one query each, shared by the gauges that show it.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** The queue as a scrape sees it, per job kind. */
export interface QueueDepth {
  kind: string;
  /** Jobs waiting or running (not dead). */
  live: number;
  /** Jobs kept after their last attempt failed. */
  dead: number;
  /** Seconds since the oldest live job was queued; 0 when none. */
  oldestAgeSeconds: number;
}

/** Webhook deliveries not yet delivered nor failed. */
export interface PendingDeliveries {
  pending: number;
  /** Seconds since the oldest pending delivery was made; 0 when none. */
  oldestAgeSeconds: number;
}

/** Where the scrape-time figures come from. */
export interface MetricsSources {
  /** The PostgreSQL pool, when there is one. */
  pool?: {
    totalCount: number;
    idleCount: number;
    waitingCount: number;
    /** pg-pool fills `max` in (10 when not given); the service always gives DB_POOL_MAX. */
    options: { max: number };
  };
  queueDepth(): Promise<QueueDepth[]>;
  pendingDeliveries(): Promise<PendingDeliveries>;
}

/** The process's metrics, and what the service calls as things happen. */
export interface Metrics {
  readonly registry: Registry;
  /** One answered HTTP request: its route pattern (never the raw URL), method and status. */
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  /** Bytes of an upload received and stored. */
  uploadBytes(bytes: number): void;
  /** A long poll began; call the returned function when it ends. */
  longPollStarted(): () => void;
  /** Stops the event-loop monitor. */
  close(): void;
}

/** Buckets of the request latency histogram, in seconds: sub-millisecond reads up to 30 s long polls. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** A scrape's database figures are read once, whichever gauge asks first. */
function shared<T>(read: () => Promise<T>): () => Promise<T | undefined> {
  let pending: Promise<T | undefined> | undefined;
  return () => {
    pending ??= read()
      .catch(() => undefined)
      .finally(() => {
        setTimeout(() => {
          pending = undefined;
        }, 100).unref();
      });
    return pending;
  };
}

/** Makes the registry with every metric. */
export function createMetrics(sources: MetricsSources): Metrics {
  const registry = new Registry();
  // Process metrics, heap and event-loop lag (`nodejs_eventloop_lag_*`). Node's delay histogram counts the
  // 20 ms sampling interval in every sample, so its gauges read about 0.020 when idle (README, Metrics).
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });

  const requests = new Counter({
    name: 'cqs_http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'cqs_http_request_duration_seconds',
    help: 'Time from request to answer, by route pattern, method and status (long polls included).',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const uploadBytes = new Counter({
    name: 'cqs_upload_bytes_received_total',
    help: 'Bytes of uploads received and stored by the embedded storage.',
    registers: [registry],
  });
  const longPolls = new Gauge({
    name: 'cqs_handoff_long_polls_waiting',
    help: 'Call-handoff reads waiting for a change (?wait=) in this process.',
    registers: [registry],
  });

  const { pool } = sources;
  if (pool) {
    const poolGauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(read());
        },
      });
    // The bound beside the counts, so a dashboard can show how full the pool is without knowing DB_POOL_MAX.
    poolGauge(
      'cqs_db_pool_max',
      'PostgreSQL connections the pool may open (DB_POOL_MAX).',
      () => pool.options.max,
    );
    poolGauge('cqs_db_pool_connections', 'PostgreSQL connections open in the pool.', () => pool.totalCount);
    poolGauge('cqs_db_pool_idle', 'PostgreSQL connections of the pool idle.', () => pool.idleCount);
    poolGauge(
      'cqs_db_pool_waiting',
      'Queries waiting for a free pooled connection.',
      () => pool.waitingCount,
    );
  }

  const queue = shared(sources.queueDepth);
  const queueGauge = (name: string, help: string, pick: (d: QueueDepth) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['kind'] as const,
      registers: [registry],
      async collect() {
        const depth = await queue();
        this.reset();
        for (const d of depth ?? []) this.set({ kind: d.kind }, pick(d));
      },
    });
  queueGauge('cqs_queue_jobs', 'Jobs queued or running (not dead), by kind.', (d) => d.live);
  queueGauge(
    'cqs_queue_oldest_job_age_seconds',
    'Seconds since the oldest queued or running job of the kind was queued.',
    (d) => d.oldestAgeSeconds,
  );
  queueGauge('cqs_queue_dead_jobs', 'Jobs kept after their last attempt failed, by kind.', (d) => d.dead);

  const deliveries = shared(sources.pendingDeliveries);
  const deliveryGauge = (name: string, help: string, pick: (p: PendingDeliveries) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        const pending = await deliveries();
        if (pending) this.set(pick(pending));
        else this.reset();
      },
    });
  deliveryGauge(
    'cqs_webhook_deliveries_pending',
    'Webhook deliveries not yet delivered nor failed.',
    (p) => p.pending,
  );
  deliveryGauge(
    'cqs_webhook_delivery_oldest_pending_age_seconds',
    'Seconds since the oldest pending webhook delivery was made (the delivery lag).',
    (p) => p.oldestAgeSeconds,
  );

  return {
    registry,
    observeRequest(method, route, status, seconds) {
      const labels = { method, route, status: String(status) };
      requests.inc(labels);
      latency.observe(labels, seconds);
    },
    uploadBytes(bytes) {
      if (bytes > 0) uploadBytes.inc(bytes);
    },
    longPollStarted() {
      longPolls.inc();
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        longPolls.dec();
      };
    },
    close() {
      registry.clear();
    },
  };
}
