/**
 * This process's own writes to the tables authentication reads, seen as they complete. The database's
 * NOTIFY (migration 0011_access_notify) reaches every process, but on its own connection: a process that
 * revokes a key and is asked with that key right after could hear its own notice too late. Watching the
 * statements it sends closes that gap for the process that wrote, whatever code path wrote (a repository,
 * a transaction, raw SQL); other processes rely on the notice.
 */

/** The tables whose changes can change what a key may do. */
const ACCESS_WRITE =
  /\b(?:update|delete\s+from|insert\s+into)\s+"?(?:api_keys|users|product_grants|products|companies)"?[\s(]/i;
const COMMIT = /^\s*(?:commit|end)\b/i;

function isThenable(value: unknown): value is Promise<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

function textOf(args: unknown[]): string {
  const first = args[0];
  if (typeof first === 'string') return first;
  const text = (first as { text?: unknown } | null)?.text;
  return typeof text === 'string' ? text : '';
}

/**
 * The driver client (a `pg` pool, a PGlite instance) that calls `changed` after each statement that writes
 * an access table, and again when the transaction holding it commits (readers may have cached the old
 * state in between). Covers what Drizzle uses, as `translatingErrors` does.
 */
export function observingAccessWrites<T extends object>(client: T, changed: () => void): T {
  let dirty = false;
  const after = (result: unknown, wrote: boolean, committed: boolean): unknown => {
    if (!wrote && !committed) return result;
    const settle = () => {
      if (wrote) dirty = true;
      if (wrote || (committed && dirty)) changed();
      if (committed) dirty = false;
    };
    if (isThenable(result)) {
      return result.then((value) => {
        settle();
        return value;
      });
    }
    settle();
    return result;
  };
  return new Proxy(client, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      switch (property) {
        case 'query':
        case 'exec':
          return (...args: unknown[]) => {
            const text = textOf(args);
            return after(value.apply(target, args), ACCESS_WRITE.test(text), COMMIT.test(text));
          };
        case 'connect':
          return (...args: unknown[]) => {
            const result = value.apply(target, args);
            // A pooled client of its own: its transaction's writes are counted apart from the pool's.
            return isThenable(result)
              ? result.then((c) => observingAccessWrites(c as object, changed))
              : result;
          };
        case 'transaction':
          return (run: (tx: object) => unknown, ...rest: unknown[]) => {
            let wrote = false;
            const tx = (t: object) =>
              run(
                observingAccessWrites(t, () => {
                  wrote = true;
                  changed();
                }),
              );
            const result = value.call(target, tx, ...rest);
            const settle = () => {
              if (wrote) changed();
            };
            return isThenable(result) ? result.finally(settle) : result;
          };
        default:
          return value.bind(target);
      }
    },
  });
}
