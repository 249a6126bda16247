/** Keeps the bench from rotting: the report writer on made-up numbers, the scenario list, the quantiles. */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { quantile } from '../bench/lib/load.ts';
import {
  growthEntry,
  judgedFigure,
  latencyEntry,
  peakBound,
  ratioEntry,
  unmeasuredEntry,
  writeReport,
} from '../bench/lib/report.ts';
import { readSettings } from '../bench/lib/settings.ts';
import { SCENARIOS } from '../bench/scenarios/index.ts';

const machine = {
  cpu_model: 'Test CPU',
  cores: 2,
  memory_gb: 4,
  node_version: 'v24.0.0',
  os: 'Test OS',
  postgres_version: 'PostgreSQL 15',
  date: '2025-01-01T00:00:00.000Z',
  load_average_1m: 1.5,
};
const side = (rps: number, p50 = 1, p99 = 5, errors = 0) => ({
  rps,
  p50_ms: p50,
  p99_ms: p99,
  errors,
  peak_rss_mb: 100,
});
const ENTRY_KEYS = [
  'baseline',
  'errors',
  'met',
  'name',
  'p50_ms',
  'p99_ms',
  'peak_rss_mb',
  'ratio',
  'rps',
  'target',
];

describe('bench report', () => {
  it('writes latest.json in the agreed shape and marks a missed target as missed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cqs-bench-smoke-'));
    try {
      const baseline = { name: 'bare', rps: 1000, errors: 0 };
      const scenarios = [
        ratioEntry({ name: 'met', service: side(600), baseline, minRatio: 0.5 }),
        ratioEntry({ name: 'missed', service: side(300), baseline, minRatio: 0.5 }),
        ratioEntry({ name: 'errors', service: side(900, 1, 5, 3), baseline, minRatio: 0.5 }),
        ratioEntry({
          name: 'memory',
          service: side(900),
          baseline,
          minRatio: 0.8,
          target: 't',
          extra: false,
        }),
        growthEntry({
          name: 'growth',
          service: side(200, 2, 20),
          earlier: { ...side(200, 2, 10), name: 'at 10k' },
          which: 'p99_ms',
          maxRatio: 1.25,
        }),
        unmeasuredEntry('skipped', 'bare', '≥ 0.60', 'skipped: endpoint not available'),
      ];
      const { json, md } = await writeReport(dir, { machine, scenarios });
      const report = JSON.parse(await readFile(json, 'utf8'));
      assert.deepEqual(Object.keys(report).sort(), ['machine', 'scenarios']);
      for (const entry of report.scenarios) {
        assert.deepEqual(Object.keys(entry).sort(), ENTRY_KEYS);
        assert.deepEqual(Object.keys(entry.baseline).sort(), ['name', 'rps']);
      }
      const met = Object.fromEntries(
        report.scenarios.map((e: { name: string; met: unknown }) => [e.name, e.met]),
      );
      assert.deepEqual(met, {
        met: true,
        missed: false,
        errors: false,
        memory: false,
        growth: false,
        skipped: 'skipped: endpoint not available',
      });
      assert.equal(report.scenarios[0].ratio, 0.6);
      assert.equal(report.scenarios[4].ratio, 2);
      const table = await readFile(md, 'utf8');
      assert.match(table, /\| missed \|.*\*\*MISSED\*\*/);
      assert.match(table, /\| met \|.*\| met \|$/m);
      assert.match(table, /skipped: endpoint not available/);
      assert.match(table, /Test CPU, 2 cores/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('lists every scenario of the issue once, each with its planned rows', () => {
    const ids = SCENARIOS.map((s) => s.id);
    assert.deepEqual(ids, [
      'first-start',
      'products',
      'create-pg',
      'create-embedded',
      'handoff',
      'handoff-full-cache',
      'upload',
      'growth',
      'analysis',
      'calls-list',
      'call-detail',
      'recording',
      'webhooks',
      'events-feed',
    ]);
    const settings = readSettings();
    for (const scenario of SCENARIOS) assert.ok(scenario.entries(settings).length > 0, scenario.id);
  });

  it('reads the figure each planned row is judged on from its target, for bench:history', () => {
    const units = new Map<string, string | undefined>();
    for (const scenario of SCENARIOS) {
      for (const planned of scenario.entries(readSettings())) {
        const entry = unmeasuredEntry(planned.name, planned.baseline, planned.target, 'skipped: test');
        const judged = judgedFigure(entry);
        if (planned.target.startsWith('reported')) assert.equal(judged, undefined, planned.target);
        else assert.ok(judged, `no figure is read from the target "${planned.target}"`);
        units.set(planned.target, judged?.unit);
      }
    }
    assert.equal(units.get('≥ 0.40'), 'ratio');
    assert.equal(units.get('p99 ≤ 1.25×'), 'ratio');
    assert.equal(units.get('≥ 100×'), 'ratio');
    assert.equal(units.get('p50 ≤ 10 ms'), 'ms');
    assert.equal(units.get('p99 ≤ 1000 ms'), 'ms');
    assert.equal(units.get('peak ≤ 400 MB'), 'MB');
    assert.equal(units.get('≤ 64 MB'), 'MB');
    assert.equal(units.get('≥ 500 deliveries/s'), '/s');
    const latency = latencyEntry({ name: 'l', service: side(100, 8, 30), which: 'p99_ms', maxMs: 50 });
    assert.deepEqual(judgedFigure(latency), { figure: 30, unit: 'ms' });
  });

  it("puts each planned row's peak RSS under item 5's bound for its database, or none for a growth", () => {
    const bounds = new Map<string, string | undefined>();
    for (const scenario of SCENARIOS) {
      for (const planned of scenario.entries(readSettings())) {
        const entry = unmeasuredEntry(planned.name, planned.baseline, planned.target, 'skipped: test');
        bounds.set(planned.name.split(' (')[0] as string, peakBound(entry));
      }
    }
    const boundOf = (prefix: string) => {
      const names = [...bounds.keys()].filter((n) => n.startsWith(prefix));
      assert.ok(names.length > 0, `no planned row starts with "${prefix}"`);
      return [...new Set(names.map((n) => bounds.get(n)))];
    };
    assert.deepEqual(boundOf('0 first start'), ['embedded']);
    assert.deepEqual(boundOf('0b operator command cqs company create on a new embedded'), ['embedded']);
    assert.deepEqual(boundOf('0b operator command cqs company create on PostgreSQL'), ['postgres']);
    assert.deepEqual(boundOf('3 POST call/create'), ['embedded']);
    assert.deepEqual(boundOf('2 POST call/create'), ['postgres']);
    assert.deepEqual(boundOf('9 call detail'), ['postgres']);
    assert.deepEqual(boundOf('5 upload'), [undefined]);
    assert.deepEqual(boundOf('10 recording'), [undefined]);
    assert.deepEqual(boundOf('7 analysis'), [undefined]);
  });

  it('judges an absolute latency target on the figure it names', () => {
    assert.equal(
      latencyEntry({ name: 'fast', service: side(100, 8, 30), which: 'p50_ms', maxMs: 10 }).met,
      true,
    );
    assert.equal(
      latencyEntry({ name: 'slow', service: side(100, 12, 30), which: 'p50_ms', maxMs: 10 }).met,
      false,
    );
    const failed = latencyEntry({ name: 'e', service: side(100, 1, 2, 1), which: 'p50_ms', maxMs: 10 });
    assert.equal(failed.met, false);
    assert.equal(failed.target, 'p50 ≤ 10 ms');
  });

  it('takes nearest-rank quantiles', () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    assert.equal(quantile(values, 0.5), 50);
    assert.equal(quantile(values, 0.99), 99);
    assert.equal(quantile([7], 0.99), 7);
    assert.ok(Number.isNaN(quantile([], 0.5)));
  });
});
