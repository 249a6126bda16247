/**
 * The one translation of the database errors a caller causes into domain errors, so no layer above the
 * adapters knows a SQLSTATE: a write to a final handoff record (the trigger's `CQ409`) is a ConflictError,
 * text PostgreSQL cannot store (a NUL character: `22P05` in jsonb, `22021` in text) and metadata past its
 * limits (`23514` of a `*_metadata_keys` or `*_metadata_size` constraint) a ValidationError, a reference to a row deleted
 * meanwhile (`23503`) a NotFoundError, a transaction PostgreSQL aborted for a concurrent one's sake (a
 * deadlock `40P01`, a serialization failure `40001`) an UnavailableError: the caller may retry. It
 * wraps the driver under Drizzle once, when the database is opened, so every repository (and every query
 * yet to be written) gets it. Drizzle wraps what the driver throws in its own error with the domain error
 * as `cause`; `findDomainError` (domain/errors.ts) finds it there. The database's error stays the domain
 * error's `cause`, SQLSTATE included.
 */
import {
  ConflictError,
  type DomainError,
  NotFoundError,
  UnavailableError,
  ValidationError,
} from '../../domain/errors.ts';
import { MAX_METADATA_BYTES, MAX_METADATA_KEYS, NUL_CHARACTER_RULE } from '../../domain/limits.ts';
import { FINAL_RECORD_SQLSTATE } from './errors.ts';

/** SQLSTATEs of text PostgreSQL cannot store (a NUL character in text or jsonb). */
const UNSTORABLE_TEXT_SQLSTATES = new Set(['22P05', '22021']);

/** SQLSTATE of a check-constraint violation; the `*_metadata_keys` and `*_metadata_size` ones bound a record's metadata. */
const CHECK_VIOLATION = '23514';

/** What a stored record's metadata would exceed, by the suffix of the check constraint that refused it. */
const METADATA_BOUNDS: [suffix: string, message: string][] = [
  ['_metadata_keys', `metadata: the record would have more than ${MAX_METADATA_KEYS} top-level keys`],
  ['_metadata_size', `metadata: the record would hold more than ${MAX_METADATA_BYTES} bytes of JSON`],
];

/**
 * SQLSTATE of a foreign-key violation. Every write checks what it refers to first, so the row it names was
 * deleted meanwhile (a call erased while a tag or a handoff record was being added to it): a 404, as it
 * would have been a moment later, not a 500.
 */
const FOREIGN_KEY_VIOLATION = '23503';

/**
 * SQLSTATEs of a transaction aborted because of a concurrent one (a deadlock, a serialization failure):
 * nothing was wrong with the request, and the same request a moment later goes through.
 */
const CONCURRENCY_ABORTS = new Set(['40P01', '40001']);

/** SQLSTATE of a unique violation, and what it means by the index that refused the row. */
const UNIQUE_VIOLATION = '23505';
const ALREADY_EXISTS: Record<string, string> = {
  products_company_name_idx: 'the company has a product of that name already',
};

/** What a missing referenced row is called in an answer, by its table. */
const REFERENCED: Record<string, string> = {
  conversations: 'the call',
  products: 'the product',
  users: 'the user',
  companies: 'the company',
  uploads: 'the upload',
  webhook_endpoints: 'the webhook endpoint',
};

/** The domain error a database error means, or undefined when it is not the caller's doing. */
export function domainErrorOfDatabase(error: unknown): DomainError | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  const constraint = (error as { constraint?: unknown } | null)?.constraint;
  let translated: DomainError | undefined;
  if (code === FINAL_RECORD_SQLSTATE) {
    translated = new ConflictError('call handoff record is final and cannot change');
  } else if (code === FOREIGN_KEY_VIOLATION) {
    const detail = (error as { detail?: unknown }).detail;
    const table = typeof detail === 'string' ? /not present in table "([^"]+)"/.exec(detail)?.[1] : undefined;
    const what = (table && REFERENCED[table]) ?? 'a record it refers to';
    translated = new NotFoundError(`${what} no longer exists (deleted meanwhile)`);
  } else if (code === UNIQUE_VIOLATION && typeof constraint === 'string' && ALREADY_EXISTS[constraint]) {
    translated = new ConflictError(ALREADY_EXISTS[constraint]);
  } else if (typeof code === 'string' && CONCURRENCY_ABORTS.has(code)) {
    translated = new UnavailableError('a concurrent change got in the way; retry');
  } else if (typeof code === 'string' && UNSTORABLE_TEXT_SQLSTATES.has(code)) {
    translated = new ValidationError(`strings ${NUL_CHARACTER_RULE}`);
  } else if (code === CHECK_VIOLATION && typeof constraint === 'string') {
    const bound = METADATA_BOUNDS.find(([suffix]) => constraint.endsWith(suffix));
    if (bound) translated = new ValidationError(bound[1]);
  }
  if (translated) translated.cause = error;
  return translated;
}

function rethrowTranslated(error: unknown): never {
  throw domainErrorOfDatabase(error) ?? error;
}

function isThenable(value: unknown): value is Promise<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/**
 * The driver client (a `pg` pool, a PGlite instance) whose queries throw domain errors where the database
 * refused what the caller sent; everything else passes through. Covers what Drizzle uses: `query` and
 * `exec`, a pool's `connect` (a transaction's client) and PGlite's `transaction` (its own query handle).
 */
export function translatingErrors<T extends object>(client: T): T {
  return new Proxy(client, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      switch (property) {
        case 'query':
        case 'exec':
          return (...args: unknown[]) => {
            const result = value.apply(target, args);
            return isThenable(result) ? result.catch(rethrowTranslated) : result;
          };
        case 'connect':
          return (...args: unknown[]) => {
            const result = value.apply(target, args);
            return isThenable(result) ? result.then((c) => translatingErrors(c as object)) : result;
          };
        case 'transaction':
          return (run: (tx: object) => unknown, ...rest: unknown[]) =>
            value.call(target, (tx: object) => run(translatingErrors(tx)), ...rest);
        default:
          // Bound to the client itself: PGlite keeps its state in private fields a proxy cannot reach.
          return value.bind(target);
      }
    },
  });
}
