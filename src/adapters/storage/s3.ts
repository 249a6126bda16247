/**
 * The S3-compatible storage backend (AWS S3, MinIO, Cloudflare R2, Google Cloud Storage's S3 interface):
 * presigned PUT URLs that pin the Content-Type, presigned GET URLs that answer with the upload's
 * Content-Type (`response-content-type`, signed with the URL), HeadObject to learn whether the client uploaded, ranged
 * GETs to probe, and DeleteObject for refused objects.
 */
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { ObjectInfo, ObjectReader, PresignedGet, PresignedPut, Storage } from './storage.ts';
import { StorageUnavailableError } from './storage.ts';

/** Where the bucket is and how to reach it. */
export interface S3StorageOptions {
  endpoint: string | undefined;
  region: string;
  bucket: string;
  forcePathStyle: boolean;
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  /**
   * Milliseconds a request may take to connect, and then go without a byte either way, before it fails
   * (the SDK retries it, then the job that made it is retried later).
   */
  timeoutMs: number;
}

/** The S3 backend, with the client for tests that look underneath. */
export interface S3Storage extends Storage {
  readonly kind: 's3';
  readonly client: S3Client;
  readonly bucket: string;
}

function isNotFound(error: unknown): boolean {
  if (error instanceof S3ServiceException) {
    return error.name === 'NotFound' || error.name === 'NoSuchKey' || error.$metadata.httpStatusCode === 404;
  }
  return false;
}

/** Client errors (4xx other than 404) are the configuration's fault; anything else may pass. */
function unavailable(error: unknown, what: string): Error {
  if (error instanceof S3ServiceException) {
    const status = error.$metadata.httpStatusCode ?? 0;
    if (status >= 400 && status < 500) return error;
  }
  return new StorageUnavailableError(`S3 ${what} failed: ${(error as Error).message}`, { cause: error });
}

/** Makes the S3 client: path-style for MinIO and s3rver, static keys when configured. */
export function createS3Client(options: S3StorageOptions): S3Client {
  return new S3Client({
    region: options.region,
    forcePathStyle: options.forcePathStyle,
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.accessKeyId && options.secretAccessKey
      ? { credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } }
      : {}),
    // Otherwise the client adds the CRC32 of an empty body to presigned URLs, which breaks real uploads.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // The SDK sets no timeout: an endpoint that took the connection and never answered held a read for
    // ever, and since a running job's lease is renewed, its worker's slot with it (a verification, an
    // analysis, an erased call's deletion never finished nor ran again).
    requestHandler: { connectionTimeout: options.timeoutMs, socketTimeout: options.timeoutMs },
  });
}

/** Opens the S3 backend. Makes no request: the bucket must exist. */
export function createS3Storage(options: S3StorageOptions): S3Storage {
  const client = createS3Client(options);
  const Bucket = options.bucket;

  async function readRange(Key: string, offset: number, length: number): Promise<Uint8Array> {
    if (length <= 0) return new Uint8Array(0);
    try {
      const out = await client.send(
        new GetObjectCommand({ Bucket, Key, Range: `bytes=${offset}-${offset + length - 1}` }),
      );
      return out.Body ? await out.Body.transformToByteArray() : new Uint8Array(0);
    } catch (error) {
      throw unavailable(error, 'GetObject');
    }
  }

  async function head(objectKey: string): Promise<ObjectInfo | undefined> {
    try {
      const out = await client.send(new HeadObjectCommand({ Bucket, Key: objectKey }));
      return { size: out.ContentLength ?? 0, etag: out.ETag };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw unavailable(error, 'HeadObject');
    }
  }

  return {
    kind: 's3',
    client,
    bucket: Bucket,
    head,
    async presignPut(objectKey: string, contentType: string, expiresIn: number): Promise<PresignedPut> {
      const url = await getSignedUrl(
        client,
        new PutObjectCommand({ Bucket, Key: objectKey, ContentType: contentType }),
        // The presigner leaves content-type unsigned by default; signed, S3 answers 403 on a mismatch.
        { expiresIn, signableHeaders: new Set(['content-type']) },
      );
      return { url, expiresIn, contentType };
    },
    async presignGet(objectKey: string, contentType: string, expiresIn: number): Promise<PresignedGet> {
      // S3 answers with the stored object's Content-Type unless the URL names one: name the upload's own,
      // whatever the uploader's tool stored. S3 serves ranges, ETag and Accept-Ranges itself.
      const url = await getSignedUrl(
        client,
        new GetObjectCommand({ Bucket, Key: objectKey, ResponseContentType: contentType }),
        { expiresIn },
      );
      return { url, expiresIn };
    },
    async open(objectKey: string): Promise<ObjectReader | undefined> {
      const info = await head(objectKey);
      if (!info) return undefined;
      return {
        size: info.size,
        etag: info.etag,
        read: (offset, length) => readRange(objectKey, offset, Math.min(length, info.size - offset)),
        async close() {},
      };
    },
    async delete(objectKey: string): Promise<void> {
      try {
        await client.send(new DeleteObjectCommand({ Bucket, Key: objectKey }));
      } catch (error) {
        if (!isNotFound(error)) throw unavailable(error, 'DeleteObject');
      }
    },
    async close(): Promise<void> {
      client.destroy();
    },
  };
}
