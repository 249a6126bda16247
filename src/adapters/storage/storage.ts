/**
 * Object storage behind one interface. Backends: `embedded` (this service serves the signed upload URLs
 * and keeps objects under DATA_DIR) and `s3` (any S3-compatible service). The factory picks one by config.
 */
import type { Readable, Writable } from 'node:stream';

/** A signed URL that accepts one PUT of an object with exactly `contentType` until it expires. */
export interface PresignedPut {
  url: string;
  expiresIn: number;
  contentType: string;
}

/**
 * A signed URL that serves GET (and, from the embedded backend, HEAD) of one object with `contentType`
 * as its Content-Type until it expires.
 */
export interface PresignedGet {
  url: string;
  expiresIn: number;
}

/** What a backend knows about a stored object. */
export interface ObjectInfo {
  /** Size in bytes. */
  size: number;
  /**
   * The object's ETag, where the backend's PUTs happen out of the service's sight (S3): what was verified
   * can then be told from bytes PUT later to a URL still valid. Undefined on the embedded backend.
   */
  etag?: string | undefined;
}

/** An open object, read piece by piece (a probe reads only the parts it needs). */
export interface ObjectReader {
  readonly size: number;
  /** The ETag of the object read (see ObjectInfo). */
  readonly etag?: string | undefined;
  /** Reads up to `length` bytes from `offset`; fewer only at the end of the object. */
  read(offset: number, length: number): Promise<Uint8Array>;
  close(): Promise<void>;
}

/** A storage backend cannot be reached or failed; the work should be retried later. */
export class StorageUnavailableError extends Error {
  override name = 'StorageUnavailableError';
}

/** A request to one of the service's own signed storage URLs, as the HTTP layer received it. */
export interface SignedUrlRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  /** The Content-Type header, undefined when none was sent. */
  contentType: string | undefined;
  /** The Content-Length header, undefined when none was sent. */
  contentLength: string | undefined;
}

/** Limits of one upload, and the moment the body may be sent (to answer `Expect: 100-continue`). */
export interface UploadLimits {
  /** Bytes at or above which the upload is refused. */
  maxBytes: number;
  /** A body that sends nothing for this long is abandoned. */
  idleTimeoutMs: number;
  /** Called once every check that needs no body has passed, just before the body is read. */
  onBodyExpected?: () => void;
}

/**
 * Why a request is refused by its signed URL (undecodable path, no or a wrong signature, expired, an upload
 * sent with another Content-Type than the signed one).
 */
export type SignedUrlRefusal =
  | { ok: false; problem: 'bad-url' | 'unsigned' | 'bad-signature' }
  | { ok: false; problem: 'expired'; expires: number; now: number }
  | { ok: false; problem: 'content-type'; expected: string; sent: string | undefined };

/**
 * What became of an upload to a signed URL: stored (size and MD5, S3's ETag), or refused and why. The
 * problems follow S3's errors one to one, so the route can answer as S3 would.
 */
export type UploadOutcome =
  | { ok: true; objectKey: string; size: number; md5: string }
  | SignedUrlRefusal
  | { ok: false; problem: 'no-length' | 'bad-length' | 'full' }
  | { ok: false; problem: 'too-large'; proposedSize?: number; reason?: string }
  | { ok: false; problem: 'incomplete' | 'stalled' | 'bad-key'; reason: string };

/** A read (GET or HEAD) of a signed GET URL, as the HTTP layer received it. */
export interface SignedReadRequest {
  method: 'GET' | 'HEAD';
  /** Path and query, as sent. */
  url: string;
  /** The Range header, undefined when none was sent. */
  range: string | undefined;
  /** The If-Range header: a Range applies only when it names the object as it is now. */
  ifRange: string | undefined;
}

/** The headers of a served read. */
export interface ReadHeaders {
  /** The Content-Type the URL was signed with: the upload's, exactly. */
  contentType: string;
  contentLength: number;
  etag: string;
  lastModified: string;
  /** `bytes START-END/SIZE` on a 206. */
  contentRange?: string;
}

/** An object's bytes, ready to be sent once. */
export interface ObjectBody {
  /** Writes the bytes to `out` and ends it; closes the object. Rejects if `out` fails or closes first. */
  sendTo(out: Writable): Promise<void>;
}

/**
 * What a read of a signed URL answers: the whole object (200) or one range of it (206), with its bytes
 * streamed from storage (none for HEAD); or refused, as S3 would (NoSuchKey, InvalidRange).
 */
export type ReadOutcome =
  | { ok: true; status: 200 | 206; headers: ReadHeaders; body: ObjectBody | undefined }
  | SignedUrlRefusal
  | { ok: false; problem: 'no-such-key'; objectKey: string }
  | { ok: false; problem: 'bad-key'; reason: string }
  | { ok: false; problem: 'unsatisfiable'; size: number; range: string };

/** Serves the signed URLs a backend hands out when the service itself is their endpoint (embedded). */
export interface SignedUrlReceiver {
  /** The URL path under which the signed URLs live. */
  readonly pathPrefix: string;
  /** Checks a signed PUT (signature, expiry, Content-Type, length) and streams its body into the object. */
  receiveUpload(request: SignedUrlRequest, body: Readable, limits: UploadLimits): Promise<UploadOutcome>;
  /** Checks a signed GET or HEAD (signature, expiry) and opens the object, or the one range asked for. */
  serveRead(request: SignedReadRequest): Promise<ReadOutcome>;
}

/** What a backend can do with objects. */
export interface Storage {
  readonly kind: 'embedded' | 's3';
  /** Present when clients send objects to this service's own URLs (embedded); absent for S3. */
  readonly receiver?: SignedUrlReceiver;
  /** Signs a PUT URL for `objectKey` pinned to `contentType`, valid for `expiresIn` seconds. */
  presignPut(objectKey: string, contentType: string, expiresIn: number): Promise<PresignedPut>;
  /** Signs a GET URL for `objectKey` that answers with `contentType`, valid for `expiresIn` seconds. */
  presignGet(objectKey: string, contentType: string, expiresIn: number): Promise<PresignedGet>;
  /** The object's size, or undefined when there is no such object. */
  head(objectKey: string): Promise<ObjectInfo | undefined>;
  /** Opens the object for reading, or undefined when there is no such object. */
  open(objectKey: string): Promise<ObjectReader | undefined>;
  /** Deletes the object; deleting a missing object is not an error. */
  delete(objectKey: string): Promise<void>;
  /** Releases the backend's resources (connections). */
  close(): Promise<void>;
}
