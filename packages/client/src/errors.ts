/** The errors the client throws: an HTTP answer that is not a success, and a deadline passed. */

/** The call and upload that uploadRecording had created when it failed (see `upload` on its errors). */
export interface UploadRef {
  /** The upload's id (getUpload, completeUpload). */
  upload_id: number;
  /** The call's conversation_id: the one given, or the one the service made up. */
  conversation_id: string;
}

/** More about an answer than its status and body. */
export interface CqsErrorOptions {
  /** The wait the answer's `Retry-After` header asked for, in ms. */
  retryAfterMs?: number | undefined;
}

/**
 * An answer of the service (or of the storage, for a PUT or a download) that is not a success: its HTTP
 * status, its `error` text, and for a 409 the conflicting ids. Also a 2xx answer whose body is not the JSON
 * the API promises (a proxy's or a web app's HTML page, say): its status is then the 2xx one.
 */
export class CqsError extends Error {
  /** The HTTP status: 400–599, or a 2xx whose body was not JSON. */
  readonly status: number;
  /** The service's `error` text (or the status text when the body had none). */
  readonly error: string;
  /** For a 409 on an ambiguous agent: the ids of the users that hold the email. */
  readonly conflictingUserIds: string[] | undefined;
  /** For a 409 on an ambiguous agent: the email that matched several users. */
  readonly agentEmail: string | undefined;
  /** The parsed body of the answer, when it was JSON. */
  readonly body: unknown;
  /** What the answer's `Retry-After` asked for, in ms (a 429 or 503 usually), capped at 2^31 − 1. */
  readonly retryAfterMs: number | undefined;
  /** Set on the errors of uploadRecording once it had created the call: its ids. */
  declare upload?: UploadRef;
  constructor(status: number, body: unknown, context: string, options: CqsErrorOptions = {}) {
    const record = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const error = typeof record.error === 'string' ? record.error : `HTTP ${status}`;
    super(`${context}: ${status} ${error}`);
    this.name = 'CqsError';
    this.status = status;
    this.error = error;
    this.body = body;
    this.retryAfterMs = options.retryAfterMs;
    const ids = record.conflicting_user_ids;
    this.conflictingUserIds = Array.isArray(ids) ? ids.map(String) : undefined;
    this.agentEmail = typeof record.agent_email === 'string' ? record.agent_email : undefined;
  }
}

/**
 * A wait that passed its deadline (waitForFinalHandoff, or an upload that never became ready). Its message
 * says the last status seen; `cause` is the last failed request's error when the last request failed.
 */
export class CqsTimeoutError extends Error {
  /** Set on the errors of uploadRecording once it had created the call: its ids. */
  declare upload?: UploadRef;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
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

/** A short account of a failed request, for a timeout's message: `429 Too many requests`, `fetch failed`. */
export function describeFailure(error: unknown): string {
  if (error instanceof CqsError) return `${error.status} ${error.error}`;
  const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
  return error instanceof Error ? `${error.message}${cause}` : String(error);
}
