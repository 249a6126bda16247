/** Chooses the storage backend from configuration. */
import type { Config } from '../../config/config.ts';
import { createEmbeddedStorage } from './embedded.ts';
import type { Storage } from './storage.ts';

/** Opens the configured storage backend; the S3 SDK (tens of MB resident) is loaded only when it is the one. */
export async function createStorage(config: Config): Promise<Storage> {
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
      const { createS3Storage } = await import('./s3.ts');
      return createS3Storage({ ...s3, bucket });
    }
  }
}
