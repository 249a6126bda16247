/** CqsClient: the service's calls, uploads, products and handoff records, typed from its OpenAPI document. */
import { type WaitOptions, waitForFinalHandoff } from './handoff.ts';
import { requestJson, type Transport } from './http.ts';
import { prepareBody, type UploadBody } from './source.ts';
import type {
  AddTagsRequest,
  CallHandoff,
  CallStateRequest,
  CreateCallRequest,
  CreateCallResponse,
  Product,
  Success,
  UploadStatus,
  UploadUrlResponse,
} from './types.ts';
import {
  type PutFunction,
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

/** A client of the Call Quality Service. */
export class CqsClient {
  readonly #transport: Transport;

  constructor(options: CqsClientOptions) {
    this.#transport = {
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      apiKey: options.apiKey,
      fetch: options.fetch ?? ((input, init) => fetch(input, init)),
    };
    if (options.put) this.#transport.put = options.put;
  }

  /** POST /api/v1/call/create: a transcript-only call answers success, one with filename an upload. */
  createCall(body: CreateCallRequest, signal?: AbortSignal): Promise<CreateCallResponse> {
    return requestJson(this.#transport, 'POST', '/api/v1/call/create', body, signal);
  }

  /** Creates the call, PUTs the recording with progress and retries, and waits for ready or rejected. */
  async uploadRecording(
    input: UploadRecordingInput,
    options: UploadRecordingOptions = {},
  ): Promise<UploadRecordingResult> {
    const { filename, contentType, body, size, ...call } = input;
    const prepared = prepareBody(body, size);
    const request: CreateCallRequest = { ...call, filename };
    if (contentType !== undefined) request.content_type = contentType;
    const upload = (await this.createCall(request, options.signal)) as UploadUrlResponse;
    await putRecording(this.#transport, upload, prepared, options);
    const verify: VerifyOptions = { ...options.verify };
    if (options.signal && !verify.signal) verify.signal = options.signal;
    const status = await waitForUpload(this.#transport, upload.upload_id, verify);
    return { upload, status };
  }

  /** GET /api/v1/upload/{upload_id}: an upload's status. */
  getUpload(uploadId: number, signal?: AbortSignal): Promise<UploadStatus> {
    return requestJson(this.#transport, 'GET', `/api/v1/upload/${uploadId}`, undefined, signal);
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
  stopCall(body: CallStateRequest, signal?: AbortSignal): Promise<Success> {
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

  /** Waits until the record is final (long poll, else polling with back-off); honours signal and deadline. */
  waitForFinalHandoff(handoffId: string, options: WaitOptions = {}): Promise<CallHandoff> {
    return waitForFinalHandoff(this.#transport, handoffId, options);
  }
}
