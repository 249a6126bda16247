/**
 * Object storage behind one interface. Backends: `embedded` (this service serves the signed upload URLs
 * and keeps objects under DATA_DIR) and `s3` (any S3-compatible service). The factory picks one by config.
 */

/** A signed URL that accepts one PUT of an object with exactly `contentType` until it expires. */
export interface PresignedPut {
  url: string;
  expiresIn: number;
  contentType: string;
}

/** What a backend knows about a stored object. */
export interface ObjectInfo {
  /** Size in bytes. */
  size: number;
}

/** An open object, read piece by piece (a probe reads only the parts it needs). */
export interface ObjectReader {
  readonly size: number;
  /** Reads up to `length` bytes from `offset`; fewer only at the end of the object. */
  read(offset: number, length: number): Promise<Uint8Array>;
  close(): Promise<void>;
}

/** A storage backend cannot be reached or failed; the work should be retried later. */
export class StorageUnavailableError extends Error {
  override name = 'StorageUnavailableError';
}

/** What a backend can do with objects. */
export interface Storage {
  readonly kind: 'embedded' | 's3';
  /** Signs a PUT URL for `objectKey` pinned to `contentType`, valid for `expiresIn` seconds. */
  presignPut(objectKey: string, contentType: string, expiresIn: number): Promise<PresignedPut>;
  /** The object's size, or undefined when there is no such object. */
  head(objectKey: string): Promise<ObjectInfo | undefined>;
  /** Opens the object for reading, or undefined when there is no such object. */
  open(objectKey: string): Promise<ObjectReader | undefined>;
  /** Deletes the object; deleting a missing object is not an error. */
  delete(objectKey: string): Promise<void>;
  /** Releases the backend's resources (connections). */
  close(): Promise<void>;
}
