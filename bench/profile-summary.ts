/**
 * `node bench/profile-summary.ts FILE.cpuprofile [N]`: the N functions with the most self time in a CPU
 * profile (from BENCH_CPU_PROF=dir npm run bench), and the share of time per package.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time per function and per package, in ms, biggest first. */
export function summarizeProfile(profile: Profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  const functions = new Map<string, number>();
  const packages = new Map<string, number>();
  let total = 0;
  for (const [id, ms] of self) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    total += ms;
    const where = frame.url.replace(/^file:\/\/.*?\/(node_modules|src)\//, '$1/');
    const key = `${frame.functionName || '(anonymous)'} ${where}:${frame.lineNumber + 1}`;
    functions.set(key, (functions.get(key) ?? 0) + ms);
    const pkg =
      /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(frame.url)?.[1] ??
      (frame.url.includes('/src/')
        ? 'service src'
        : frame.url.startsWith('node:')
          ? 'node core'
          : frame.url || frame.functionName);
    packages.set(pkg, (packages.get(pkg) ?? 0) + ms);
  }
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return { total, functions: sorted(functions), packages: sorted(packages) };
}

if (import.meta.main) {
  const [file, n] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: node bench/profile-summary.ts FILE.cpuprofile [N]\n');
    process.exit(2);
  }
  const { total, functions, packages } = summarizeProfile(JSON.parse(readFileSync(file, 'utf8')) as Profile);
  const pct = (ms: number) => `${((ms / total) * 100).toFixed(1).padStart(5)}%`;
  process.stdout.write(`total ${(total / 1000).toFixed(1)} s sampled\n\nby package:\n`);
  for (const [name, ms] of packages.slice(0, 12)) process.stdout.write(`${pct(ms)}  ${name}\n`);
  process.stdout.write('\ntop self time:\n');
  for (const [name, ms] of functions.slice(0, Number(n ?? 25))) process.stdout.write(`${pct(ms)}  ${name}\n`);
}
