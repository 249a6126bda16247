/** The errors the client throws: an HTTP answer that is not a success, and a deadline passed. */

/** An error answer of the service: its HTTP status, its `error` text, and for a 409 the conflicting ids. */
export class CqsError extends Error {
  /** The HTTP status (400–599). */
  readonly status: number;
  /** The service's `error` text (or the status text when the body had none). */
  readonly error: string;
  /** For a 409 on an ambiguous agent: the ids of the users that hold the email. */
  readonly conflictingUserIds: string[] | undefined;
  /** For a 409 on an ambiguous agent: the email that matched several users. */
  readonly agentEmail: string | undefined;
  /** The parsed body of the answer, when it was JSON. */
  readonly body: unknown;
  constructor(status: number, body: unknown, context: string) {
    const record = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const error = typeof record.error === 'string' ? record.error : `HTTP ${status}`;
    super(`${context}: ${status} ${error}`);
    this.name = 'CqsError';
    this.status = status;
    this.error = error;
    this.body = body;
    const ids = record.conflicting_user_ids;
    this.conflictingUserIds = Array.isArray(ids) ? ids.map(String) : undefined;
    this.agentEmail = typeof record.agent_email === 'string' ? record.agent_email : undefined;
  }
}

/** A wait that passed its deadline (waitForFinalHandoff, or an upload that never became ready). */
export class CqsTimeoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CqsTimeoutError';
  }
}

/** Whether an answer or a thrown error is worth retrying: a network error, 429 or 5xx. */
export function isRetryable(error: unknown): boolean {
  if (error instanceof CqsError) return error.status === 429 || error.status >= 500;
  return !(error instanceof CqsTimeoutError) && !isAbort(error);
}

/** Whether an error is an abort (an AbortSignal fired). */
export function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');
}
