/**
 * Classifies database errors: an outage (the HTTP edge answers 503), and the SQLSTATEs that
 * `error-translation.ts` turns into domain errors.
 */

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
]);

const UNAVAILABLE_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Cannot use a pool after calling end',
];

function chain(error: unknown): unknown[] {
  const out: unknown[] = [];
  let current: unknown = error;
  for (let i = 0; i < 5 && current instanceof Object; i++) {
    out.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  return out;
}

/** True when the error means the database cannot be reached, rather than that the query was wrong. */
export function isDatabaseUnavailable(error: unknown): boolean {
  return chain(error).some((e) => {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
    const message = (e as { message?: unknown }).message;
    return typeof message === 'string' && UNAVAILABLE_MESSAGES.some((m) => message.includes(m));
  });
}

/** SQLSTATE raised by the call_handoffs trigger when a final record would change. */
export const FINAL_RECORD_SQLSTATE = 'CQ409';
