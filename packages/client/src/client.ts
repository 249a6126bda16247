/** CqsClient: the service's calls, uploads, products and handoff records, typed from its OpenAPI document. */
import { MAX_TIMER_MS, type RetryOptions, withRetries } from './backoff.ts';
import { callPath, iterateCallPages, iterateCalls, type ListCallsOptions } from './calls.ts';
import type { UploadRef } from './errors.ts';
import { type WaitOptions, waitForFinalHandoff } from './handoff.ts';
import { type PutFunction, requestJson, type Transport } from './http.ts';
import { prepareBody, type UploadBody } from './source.ts';
import type {
  AddTagsRequest,
  CallDetail,
  CallHandoff,
  CallItem,
  CallPage,
  CallStateRequest,
  CreateCallRequest,
  CreateCallResponse,
  CreatedWebhook,
  CreateWebhookRequest,
  EventsPage,
  ListCallsFilters,
  Product,
  RecordingLink,
  StopCallRequest,
  Success,
  Tag,
  UploadStatus,
  UploadUrlResponse,
  WebhookDelivery,
  WebhookEndpoint,
} from './types.ts';
import {
  MAX_UPLOAD_BYTES,
  type PutOptions,
  putRecording,
  type VerifyOptions,
  waitForUpload,
} from './upload.ts';

/** How to reach the service. */
export interface CqsClientOptions {
  /** E.g. `https://cqs.example.com` (no trailing `/api/v1`). */
  baseUrl: string;
  /** An API key (`cqs_…`). */
  apiKey: string;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
  /** How recordings are PUT (default: through fetch; in Node use `nodePut` from `@cqs/client/node`). */
  put?: PutFunction;
}

/** What uploadRecording needs: the call (without filename/content_type), the file's name and content. */
export interface UploadRecordingInput extends Omit<CreateCallRequest, 'filename' | 'content_type'> {
  /** Base name of the file; its extension decides the type on the audio path. */
  filename: string;
  /** Omit for audio (the service infers it from the extension); required for video. */
  contentType?: string;
  /** The content: bytes, a Blob, a stream or iterable (give `size`), or a re-openable source. */
  body: UploadBody;
  /** Length in bytes, needed for a stream or an iterable. */
  size?: number;
}

/** Options of uploadRecording. */
export interface UploadRecordingOptions extends PutOptions {
  /** Options of the wait for verification after the PUT. */
  verify?: VerifyOptions;
}

/** The outcome of uploadRecording: the upload as issued, and its final status. */
export interface UploadRecordingResult {
  upload: UploadUrlResponse;
  status: UploadStatus;
}

/** Parameters of the event feed. */
export interface EventsQuery {
  after?: string;
  limit?: number;
  types?: string[];
}

/** Options of events(): the feed's parameters, the pause between empty polls, retries, and the end. */
export interface EventsOptions extends EventsQuery, RetryOptions {
  /** Ms between requests while the feed has nothing new (default 1000). */
  pollIntervalMs?: number;
  /**
   * Transient failures (a network error, 429 or 5xx) retried in a row, each after the longer of
   * `Retry-After` and a back-off to 30 s (default: no limit, the feed is followed through an outage).
   */
  maxRetries?: number;
  /** Ends the iteration (it returns; it does not throw). */
  signal?: AbortSignal;
}

/** Resolves after `ms`, or at once when the signal aborts (the caller then looks at the signal). */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, Math.min(ms, MAX_TIMER_MS));
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** A client of the Call Quality Service. */
export class CqsClient {
  readonly #transport: Transport;

  constructor(options: CqsClientOptions) {
    // A key with a character no header may carry made every request throw fetch's own error, which quotes
    // the header's value: the key, on stderr and in logs.
    if (typeof options.apiKey !== 'string' || !/^[\x21-\x7e]+$/.test(options.apiKey)) {
      throw new TypeError('apiKey must be printable ASCII without spaces (an API key: cqs_…)');
    }
    this.#transport = {
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      apiKey: options.apiKey,
      fetch: options.fetch ?? ((input, init) => fetch(input, init)),
    };
    if (options.put) this.#transport.put = options.put;
  }

  /**
   * GET /api/v1/calls, every page: the calls that match the filters, newest first, as an async iterator
   * that follows `next_cursor` (a page is fetched only when the previous one is used up). Needs `calls:read`.
   * A page's request that fails transiently (network, 429, 5xx) is retried (`maxRetries`, default 5);
   * `cursor` starts after a page that listCallPages handed over.
   */
  listCalls(
    filters: ListCallsFilters = {},
    options: ListCallsOptions = {},
  ): AsyncGenerator<CallItem, void, undefined> {
    return iterateCalls(this.#transport, filters, options);
  }

  /**
   * listCalls one page at a time: each page as the service answers it, `{ calls, next_cursor }`. Save a
   * page's `next_cursor` once its calls are processed, and pass it as `cursor` to resume after it.
   */
  listCallPages(
    filters: ListCallsFilters = {},
    options: ListCallsOptions = {},
  ): AsyncGenerator<CallPage, void, undefined> {
    return iterateCallPages(this.#transport, filters, options);
  }

  /** GET /api/v1/calls/{id}: one call with transcript, tags, metadata, uploads and linked handoff ids. */
  getCall(id: string, signal?: AbortSignal): Promise<CallDetail> {
    return requestJson(this.#transport, 'GET', callPath(id), undefined, signal);
  }

  /** A signed URL of the call's latest ready recording, with its type and size (404 when there is none). */
  recordingUrl(id: string, signal?: AbortSignal): Promise<RecordingLink> {
    return requestJson(this.#transport, 'GET', callPath(id, '/recording?redirect=false'), undefined, signal);
  }

  /**
   * POST /api/v1/calls/{id}/tags: add_tags's tags on the call with this id (a key with `calls` that may
   * read the call); unlike addTags, it reaches a call whose agent was deactivated or shares an email.
   */
  addTagsToCall(id: string, tags: Tag[], signal?: AbortSignal): Promise<Success> {
    return requestJson(this.#transport, 'POST', callPath(id, '/tags'), { tags }, signal);
  }

  /** DELETE /api/v1/calls/{id}: erases the call and everything of it (`calls:delete`, an admin's key). */
  async deleteCall(id: string, signal?: AbortSignal): Promise<void> {
    await requestJson(this.#transport, 'DELETE', callPath(id), undefined, signal);
  }

  /** POST /api/v1/call/create: a transcript-only call answers success, one with filename an upload. */
  createCall(body: CreateCallRequest, signal?: AbortSignal): Promise<CreateCallResponse> {
    return requestJson(this.#transport, 'POST', '/api/v1/call/create', body, signal);
  }

  /**
   * Creates the call, PUTs the recording with progress and retries, and waits for an end state: `ready`,
   * `rejected` or `expired`. An empty recording, or one of MAX_UPLOAD_BYTES (250,000,000) bytes or more, is
   * a RangeError before anything is created. An error thrown once the call exists carries its ids as
   * `error.upload` (`{ upload_id, conversation_id }`), except an abort's reason, which is rethrown as it is.
   */
  async uploadRecording(
    input: UploadRecordingInput,
    options: UploadRecordingOptions = {},
  ): Promise<UploadRecordingResult> {
    const { filename, contentType, body, size, ...call } = input;
    const prepared = prepareBody(body, size);
    // The service refuses both anyway, but only after the call is made (left with a pending or rejected
    // upload) and, on S3, after the whole file was sent. An empty file is a recording that failed to write.
    if (prepared.size === 0) {
      throw new RangeError(
        'uploadRecording: the recording is empty (0 bytes); the service rejects a file with no audio or video',
      );
    }
    if (prepared.size >= MAX_UPLOAD_BYTES) {
      throw new RangeError(
        `uploadRecording: the recording is ${prepared.size} bytes; the service takes recordings under ${MAX_UPLOAD_BYTES} bytes (250 MB)`,
      );
    }
    const request: CreateCallRequest = { ...call, filename };
    if (contentType !== undefined) request.content_type = contentType;
    const upload = (await this.createCall(request, options.signal)) as UploadUrlResponse;
    try {
      await putRecording(this.#transport, upload, prepared, options);
      // Verification starts at once instead of at the service's next sweep. Best effort: when the call
      // fails (a service without it, a network error), the sweep still finds the object and the poll waits.
      await this.completeUpload(upload.upload_id, options.signal).catch((error: unknown) => {
        if (options.signal?.aborted) throw error;
      });
      const verify: VerifyOptions = { ...options.verify };
      if (options.signal && !verify.signal) verify.signal = options.signal;
      const status = await waitForUpload(this.#transport, upload.upload_id, verify);
      return { upload, status };
    } catch (error) {
      throw withUpload(
        error,
        { upload_id: upload.upload_id, conversation_id: upload.conversation_id },
        options.signal,
      );
    }
  }

  /** GET /api/v1/upload/{upload_id}: an upload's status. */
  getUpload(uploadId: number, signal?: AbortSignal): Promise<UploadStatus> {
    return requestJson(this.#transport, 'GET', `/api/v1/upload/${uploadId}`, undefined, signal);
  }

  /** POST /api/v1/upload/{upload_id}/complete: says the PUT is done, so verification starts at once. */
  completeUpload(uploadId: number, signal?: AbortSignal): Promise<UploadStatus> {
    return requestJson(this.#transport, 'POST', `/api/v1/upload/${uploadId}/complete`, undefined, signal);
  }

  /** POST /api/v1/call/add_tags. */
  addTags(body: AddTagsRequest, signal?: AbortSignal): Promise<Success> {
    return requestJson(this.#transport, 'POST', '/api/v1/call/add_tags', body, signal);
  }

  /** POST /api/v1/call/start (beta). */
  startCall(body: CallStateRequest, signal?: AbortSignal): Promise<Success> {
    return requestJson(this.#transport, 'POST', '/api/v1/call/start', body, signal);
  }

  /** POST /api/v1/call/stop (beta). */
  stopCall(body: StopCallRequest, signal?: AbortSignal): Promise<Success> {
    return requestJson(this.#transport, 'POST', '/api/v1/call/stop', body, signal);
  }

  /** GET /api/v1/product/list: the products the key's user sees. */
  async listProducts(signal?: AbortSignal): Promise<Product[]> {
    const body = await requestJson<{ products: Product[] }>(
      this.#transport,
      'GET',
      '/api/v1/product/list',
      undefined,
      signal,
    );
    return body.products;
  }

  /** GET /api/v1/call-handoff/{id}: the record as it is now (maybe not final). */
  getHandoff(handoffId: string, signal?: AbortSignal): Promise<CallHandoff> {
    const path = `/api/v1/call-handoff/${encodeURIComponent(handoffId)}`;
    return requestJson(this.#transport, 'GET', path, undefined, signal);
  }

  /** GET /api/v1/events: one page of the event feed after `after` (admin key with `events:read`). */
  getEvents(query: EventsQuery = {}, signal?: AbortSignal): Promise<EventsPage> {
    const params = new URLSearchParams();
    if (query.after) params.set('after', query.after);
    if (query.limit) params.set('limit', String(query.limit));
    for (const type of query.types ?? []) params.append('type', type);
    const search = params.size > 0 ? `?${params}` : '';
    return requestJson(this.#transport, 'GET', `/api/v1/events${search}`, undefined, signal);
  }

  /**
   * Follows the event feed from `after` (a cursor saved earlier; the oldest kept event without it), for
   * ever or until `signal` aborts (the iteration then ends): yields, in order, every page with events and
   * every page that moves the cursor without any (a feed filtered by `types` moves past events of other
   * types). Save `next_cursor` once a page is processed and pass it as `after` to resume there; every event
   * is seen exactly once. A transient failure (network, 429, 5xx) is retried after the longer of
   * `Retry-After` and a back-off to 30 s, without limit unless `maxRetries` says; `onRetry` sees each.
   * (Empty pages were not yielded, so a saved cursor of a filtered feed stayed behind, and once the events
   * after it were past retention, resuming from it answered 410 though nothing followed was lost.)
   */
  async *events(options: EventsOptions = {}): AsyncGenerator<EventsPage> {
    let after = options.after;
    const { signal } = options;
    const query: EventsQuery = {};
    if (options.limit !== undefined) query.limit = options.limit;
    if (options.types !== undefined) query.types = options.types;
    while (!signal?.aborted) {
      let page: EventsPage;
      try {
        const from = after;
        page = await withRetries(
          () => this.getEvents({ ...query, ...(from ? { after: from } : {}) }, signal),
          options,
          Number.POSITIVE_INFINITY,
        );
      } catch (error) {
        if (signal?.aborted) return;
        throw error;
      }
      const moved = page.next_cursor !== after;
      after = page.next_cursor;
      if (page.events.length > 0 || moved) yield page;
      if (page.events.length === 0) await pause(options.pollIntervalMs ?? 1000, signal);
    }
  }

  /** POST /api/v1/webhooks: a new endpoint, with its `secret` (shown only here). */
  createWebhook(body: CreateWebhookRequest, signal?: AbortSignal): Promise<CreatedWebhook> {
    return requestJson(this.#transport, 'POST', '/api/v1/webhooks', body, signal);
  }

  /** GET /api/v1/webhooks. */
  async listWebhooks(signal?: AbortSignal): Promise<WebhookEndpoint[]> {
    const body = await requestJson<{ webhooks: WebhookEndpoint[] }>(
      this.#transport,
      'GET',
      '/api/v1/webhooks',
      undefined,
      signal,
    );
    return body.webhooks;
  }

  /** POST /api/v1/webhooks/{id}/test: sends a `webhook.test` message. */
  testWebhook(id: string, signal?: AbortSignal): Promise<{ event_id: string }> {
    const path = `/api/v1/webhooks/${encodeURIComponent(id)}/test`;
    return requestJson(this.#transport, 'POST', path, undefined, signal);
  }

  /** GET /api/v1/webhooks/{id}/deliveries: the delivery log, newest first. */
  async listWebhookDeliveries(id: string, signal?: AbortSignal): Promise<WebhookDelivery[]> {
    const path = `/api/v1/webhooks/${encodeURIComponent(id)}/deliveries`;
    const body = await requestJson<{ deliveries: WebhookDelivery[] }>(
      this.#transport,
      'GET',
      path,
      undefined,
      signal,
    );
    return body.deliveries;
  }

  /** Waits until the record is final (long poll, else polling with back-off); honours signal and deadline. */
  waitForFinalHandoff(handoffId: string, options: WaitOptions = {}): Promise<CallHandoff> {
    return waitForFinalHandoff(this.#transport, handoffId, options);
  }
}

/**
 * The error of an upload that failed after its call was created, with the call's ids as `upload` (its
 * class, status and message unchanged). An abort's reason is the caller's own value: it is left as it is.
 */
function withUpload(error: unknown, upload: UploadRef, signal: AbortSignal | undefined): unknown {
  if (error instanceof Error && error !== signal?.reason && !Object.isFrozen(error)) {
    Object.defineProperty(error, 'upload', { value: upload, enumerable: true, configurable: true });
  }
  return error;
}
