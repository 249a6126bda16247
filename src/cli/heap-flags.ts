/**
 * V8 sizes the young generation from the machine's memory: on a machine with 16 GB or more its semi-spaces
 * grow to 64 MB each under start-up's and a busy server's allocation, and the pages they touched stay
 * resident (measured: 134 MB of new space, idle RSS 286 MB on PostgreSQL; 158 MB with 4 MB semi-spaces, no
 * loss of requests per second in the bench). The limit is read only when the isolate is made, so `cqs serve`
 * replaces its own process image (same pid, same stdio) with one started with the flag, unless the operator
 * chose a size (in the node arguments or NODE_OPTIONS) or the platform has no execve.
 */
const FLAG = '--max-semi-space-size';
/** Megabytes per semi-space. */
export const SERVE_SEMI_SPACE_MB = 4;

/** Re-executes this process with the serve flags when it has none of its own; returns when it did not. */
export function execWithServeFlags(): void {
  const execve = (process as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never })
    .execve;
  if (typeof execve !== 'function') return;
  const chosen = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  if (chosen.some((arg) => arg.startsWith(FLAG))) return;
  const argv = [`${FLAG}=${SERVE_SEMI_SPACE_MB}`, ...process.execArgv, ...process.argv.slice(1)];
  execve.call(process, process.execPath, [process.execPath, ...argv], process.env);
}
