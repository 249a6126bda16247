/** s3rver (an S3-compatible server) on loopback for a test file, with the service's environment to use it. */
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import S3rver from 's3rver';

/** The bucket the server is made with. */
export const S3_TEST_BUCKET = 'cqs-test';
/** The region the service signs for. */
export const S3_TEST_REGION = 'eu-west-3';
/** s3rver's fixed credentials. */
export const S3_TEST_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

/** A running s3rver with its bucket, in a temporary directory. */
export interface TestS3 {
  /** The service's environment to store on it. */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** Starts s3rver on a free loopback port. */
export async function startS3rver(): Promise<TestS3> {
  const directory = await mkdtemp(join(tmpdir(), 'cqs-s3rver-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: S3_TEST_BUCKET }],
  });
  const { port } = await server.run();
  return {
    env: {
      STORAGE_BACKEND: 's3',
      S3_ENDPOINT: `http://127.0.0.1:${port}`,
      S3_BUCKET: S3_TEST_BUCKET,
      S3_REGION: S3_TEST_REGION,
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: S3_TEST_CREDENTIALS.accessKeyId,
      S3_SECRET_ACCESS_KEY: S3_TEST_CREDENTIALS.secretAccessKey,
    },
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** PUTs a body to a presigned URL over HTTP/1.1 with a Content-Length; returns the status. */
export function putTo(
  url: string,
  contentType: string,
  body: Buffer | Readable,
  length: number,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = httpRequest(
      {
        host: u.hostname,
        port: u.port,
        method: 'PUT',
        path: `${u.pathname}${u.search}`,
        headers: { 'content-type': contentType, 'content-length': String(length) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    if (Buffer.isBuffer(body)) req.end(body);
    else body.pipe(req);
  });
}
