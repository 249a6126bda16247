/** @cqs/client: a typed client of the Call Quality Service for Node 20+ and browsers. */

export type { RetryOptions } from './backoff.ts';
export type { ListCallsOptions } from './calls.ts';
export {
  CqsClient,
  type CqsClientOptions,
  type EventsOptions,
  type EventsQuery,
  type UploadRecordingInput,
  type UploadRecordingOptions,
  type UploadRecordingResult,
} from './client.ts';
export { CqsError, type CqsErrorOptions, CqsTimeoutError, type UploadRef } from './errors.ts';
export type { paths } from './generated/openapi.ts';
export { MAX_WAIT_SECONDS, type WaitOptions } from './handoff.ts';
export type { PutFunction } from './http.ts';
export type { UploadBody, UploadSource } from './source.ts';
export type * from './types.ts';
export {
  fetchPut,
  MAX_UPLOAD_BYTES,
  type PutOptions,
  type UploadProgress,
  type VerifyOptions,
} from './upload.ts';
export { type VerifyWebhookOptions, verifyWebhook, WebhookVerificationError } from './webhooks.ts';
