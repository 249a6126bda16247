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

/** What a backend can do with objects. */
export interface Storage {
  readonly kind: 'embedded' | 's3';
  /** Signs a PUT URL for `objectKey` pinned to `contentType`, valid for `expiresIn` seconds. */
  presignPut(objectKey: string, contentType: string, expiresIn: number): Promise<PresignedPut>;
}
