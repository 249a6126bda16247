/** The embedded storage backend: objects under DATA_DIR/objects, uploads through the service's own URLs. */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { signedPutUrl } from './embedded-signer.ts';
import type { PresignedPut, Storage } from './storage.ts';

/** The embedded backend, with what its upload route needs to check and store uploads. */
export interface EmbeddedStorage extends Storage {
  readonly kind: 'embedded';
  /** The HMAC secret of the upload URLs. */
  readonly secret: string;
  /** The folder that holds the objects. */
  readonly root: string;
}

/** Reads the signing secret from DATA_DIR, making one on first start, unless one is configured. */
export function loadSigningSecret(dataDir: string, configured: string | undefined): string {
  if (configured) return configured;
  const path = join(dataDir, 'storage-secret');
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(32).toString('hex');
  try {
    writeFileSync(path, `${secret}\n`, { mode: 0o600, flag: 'wx' });
    return secret;
  } catch (error) {
    // Another process made it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(path, 'utf8').trim();
    throw error;
  }
}

/** Opens the embedded backend. */
export function createEmbeddedStorage(options: {
  dataDir: string;
  publicUrl: string;
  secret: string | undefined;
}): EmbeddedStorage {
  const secret = loadSigningSecret(options.dataDir, options.secret);
  const root = join(options.dataDir, 'objects');
  mkdirSync(root, { recursive: true });
  return {
    kind: 'embedded',
    secret,
    root,
    async presignPut(objectKey: string, contentType: string, expiresIn: number): Promise<PresignedPut> {
      const expires = Math.floor(Date.now() / 1000) + expiresIn;
      return {
        url: signedPutUrl(options.publicUrl, secret, objectKey, contentType, expires),
        expiresIn,
        contentType,
      };
    },
  };
}
