/** Chooses the storage backend from configuration. */
import type { Config } from '../../config/config.ts';
import { createEmbeddedStorage } from './embedded.ts';
import { createS3Storage } from './s3.ts';
import type { Storage } from './storage.ts';

/** Opens the configured storage backend. */
export function createStorage(config: Config): Storage {
  switch (config.storage.backend) {
    case 'embedded':
      return createEmbeddedStorage({
        dataDir: config.dataDir,
        publicUrl: config.publicUrl,
        secret: config.storage.signingSecret,
      });
    case 's3': {
      const { bucket, ...s3 } = config.storage.s3;
      // loadConfig refuses STORAGE_BACKEND=s3 without a bucket; this keeps the type honest.
      if (!bucket) throw new Error('S3_BUCKET is required when STORAGE_BACKEND=s3');
      return createS3Storage({ ...s3, bucket });
    }
  }
}
