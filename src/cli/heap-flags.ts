/**
 * V8 flags of `cqs serve`, which can only be given when the isolate is made: the process replaces its own
 * image (same pid, same stdio) with one started with them, unless the operator chose V8 flags of their own
 * (in the node arguments or NODE_OPTIONS) or the platform has no execve. Every other command that loads the
 * server's modules (the operator commands, `migrate`, `embedded-template`, `prepare`, `--help`) runs with
 * them too: without them, `cqs company create` peaked at 650-775 MB on the embedded database (PGlite's
 * WebAssembly optimised by TurboFan, below) and 300 MB on PostgreSQL (the young generation grown to its full
 * size by loading the modules), and V8 takes the compile cache's code only under the flags it was made with.
 *
 * - V8 sizes the young generation from the machine's memory: with 16 GB or more its semi-spaces grow to
 *   64 MB each under start-up's and a busy server's allocation, and the pages they touched stay resident
 *   (measured: 134 MB of new space, idle RSS 286 MB on PostgreSQL; 147 MB with 4 MB semi-spaces, with no
 *   loss of requests per second in the bench). 2 MB semi-spaces took another 6-10 MB off the peak under
 *   creates and call reads, again with the same requests per second.
 * - V8 lets the old generation grow to several times what survives a full collection before it collects
 *   again, by a factor it picks from its own GC speed: under the bench's creates and call reads the old
 *   space filled to 80-127 MB of mostly dead objects over a live set of about 35 MB, and those pages stayed
 *   resident (peak RSS 183-285 MB on PostgreSQL). With a growth of 20 % it collects when the old space is
 *   1.2 times its live size: peak 140-158 MB for creates and call reads, and within the bench's noise the
 *   same requests per second on product/list, handoff reads and creates (call reads, the most allocating
 *   route, about a fifth fewer).
 * - V8 pretenures an allocation site (allocates its objects straight in the old generation) when most of
 *   them survived a young collection while it watched. Some starts (4 in 14 measured with an empty compile
 *   cache, as after an install or upgrade) decided so for a site on the request path: those requests'
 *   short-lived objects then filled the old generation, which V8 collected every 100 ms instead of every
 *   1.7 s, and old objects pointing at young ones kept those alive through young collections too. The
 *   process then used 2.2-2.6 times the CPU per cached handoff read (64-76 µs against 27-33) for as long as
 *   it ran. Without allocation-site pretenuring none of 16 starts did, and the others ran as fast.
 * - V8 has two optimising compilers: Maglev, which compiles a warm function quickly, and TurboFan, which
 *   compiles a hot one well. Maglev's jobs run on background threads in zones of malloc'd memory (17.4 MB
 *   of the malloc in use at the peak of the bench's call reads, by heaptrack), and every warm function of
 *   a route is compiled twice. Without it, measured in the bench's scenarios on PostgreSQL in interleaved
 *   runs: peak RSS 118-121 MB against 142-144 for product lists, 119-126 against 135-144 for handoff
 *   reads, 137 against 144-148 with 10,000 handoff records cached, 129-132 against 150-152 for creates,
 *   136 against 159 for creates with a webhook endpoint, 150-167 against 165-174 for call reads; a first
 *   embedded start 291 MB against 325. Requests per second the same within the runs' noise, call reads
 *   more (540-717 against 392-477): TurboFan's code for the hot path comes as soon, and no Maglev code
 *   deoptimises on the way.
 * - The embedded database is PostgreSQL compiled to WebAssembly (9 MB). Optimising its hot functions with
 *   TurboFan took RSS from 200 MB to 790 MB for a few seconds at every start (the compiler's working
 *   memory, freed afterwards); Liftoff, V8's baseline compiler, runs it without that peak.
 *
 * The new image also gets glibc's MALLOC_ARENA_MAX=2 unless one is set: glibc makes a malloc arena per
 * thread that allocates (V8's GC helpers, libuv's pool), up to eight per core, and the memory freed in them
 * stays resident: under the bench's call reads, peak RSS 146-151 MB with two arenas against 156-161 without,
 * at the same requests per second. Other C libraries ignore the variable.
 *
 * The new image also gets Node's compile cache (NODE_COMPILE_CACHE, in the temporary folder as
 * `module.enableCompileCache()` would put it, unless one is set): it keeps the TypeScript sources with their
 * types stripped, so from the second start on Node does not load its type stripper (amaro, a WebAssembly
 * build of swc: 18 MB resident) and starts faster.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SEMI_SPACE = '--max-semi-space-size';
/** Megabytes per semi-space. */
export const SERVE_SEMI_SPACE_MB = 2;
const HEAP_GROWING = '--heap-growing-percent';
/** How far (percent) the old generation may grow past its live size before V8 collects it again. */
export const SERVE_HEAP_GROWING_PERCENT = 20;
const LIFTOFF_ONLY = '--liftoff-only';
/** Off: see the file's comment. */
export const NO_PRETENURING = '--no-allocation-site-pretenuring';
/** Off: see the file's comment. */
export const NO_MAGLEV = '--no-maglev';
/** The flags this file sets; an operator who gave any of them chose for themselves. */
const OWN_FLAGS = [
  SEMI_SPACE,
  HEAP_GROWING,
  LIFTOFF_ONLY,
  NO_PRETENURING,
  '--allocation-site-pretenuring',
  NO_MAGLEV,
  '--maglev',
];

/** Environment `cqs serve`'s new image gets, where the operator set none of it. */
export const SERVE_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/** The flags `cqs serve` runs with, for the database it opens. */
export function serveFlags(env: NodeJS.ProcessEnv): string[] {
  return [
    `${SEMI_SPACE}=${SERVE_SEMI_SPACE_MB}`,
    `${HEAP_GROWING}=${SERVE_HEAP_GROWING_PERCENT}`,
    NO_PRETENURING,
    NO_MAGLEV,
    ...(env.DATABASE_URL ? [] : [LIFTOFF_ONLY]),
  ];
}

/** The folder `cqs serve` gives Node as its compile cache (NODE_COMPILE_CACHE unless one is set). */
export function compileCacheDir(env: NodeJS.ProcessEnv): string {
  return env.NODE_COMPILE_CACHE ?? join(tmpdir(), 'node-compile-cache');
}

/** Re-executes this process with the serve flags when it has none of its own; returns when it did not. */
export function execWithServeFlags(): void {
  const execve = (process as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never })
    .execve;
  if (typeof execve !== 'function') return;
  const chosen = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  if (chosen.some((arg) => OWN_FLAGS.some((flag) => arg.startsWith(flag)))) return;
  const argv = [...serveFlags(process.env), ...process.execArgv, ...process.argv.slice(1)];
  const env = { NODE_COMPILE_CACHE: compileCacheDir(process.env), ...SERVE_ENV, ...process.env };
  execve.call(process, process.execPath, [process.execPath, ...argv], env);
}
