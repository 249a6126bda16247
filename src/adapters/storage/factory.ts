/** Chooses the storage backend from configuration. */
import type { Config } from '../../config/config.ts';
import { createEmbeddedStorage } from './embedded.ts';
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
    case 's3':
      throw new Error('the S3 storage backend is not available yet');
  }
}
