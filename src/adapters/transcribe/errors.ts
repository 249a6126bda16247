/** Errors of the transcription engines beyond the domain's TranscriptionError. */
import { TranscriptionError } from '../../domain/transcription/engine.ts';

/**
 * The server asked to be left alone for longer than a job may wait in place (a 429 or 503 with a long
 * Retry-After, or a short one past the job's waiting budget): a transient failure that says when another
 * attempt is worth making. The job queue should run the job again at `retryAt`, without spending an attempt:
 * retried on its own backoff (2, 4, 8, 16 s) a `Retry-After: 3600` used up all five attempts in 38 s.
 */
export class TranscriptionRetryLaterError extends TranscriptionError {
  override name = 'TranscriptionRetryLaterError';
  /** When the server said another request may be made. */
  readonly retryAt: Date;
  /** The same, as milliseconds from when the error was made. */
  readonly retryAfterMs: number;

  /** `retryAt`: milliseconds since the epoch. */
  constructor(message: string, retryAt: number, options?: ErrorOptions) {
    super(message, true, options);
    this.retryAt = new Date(Math.ceil(retryAt));
    this.retryAfterMs = Math.max(0, this.retryAt.getTime() - Date.now());
  }
}
