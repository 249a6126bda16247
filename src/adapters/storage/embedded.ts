/** The embedded storage backend: objects under DATA_DIR/objects, uploads through the service's own URLs. */
import { randomBytes, randomUUID } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { open, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { MIN_SIGNING_SECRET_LENGTH } from '../../config/config.ts';
import { isAlive } from '../processes.ts';
import { createSignedUrlReceiver } from './embedded-receiver.ts';
import { signedGetUrl, signedPutUrl } from './embedded-signer.ts';
import { TEMP_FILE_HOST } from './embedded-writer.ts';
import { objectPath } from './object-path.ts';
import type {
  ObjectInfo,
  ObjectReader,
  PresignedGet,
  PresignedPut,
  SignedUrlReceiver,
  Storage,
} from './storage.ts';

/** The embedded backend: it receives the uploads to the URLs it signs. */
export interface EmbeddedStorage extends Storage {
  readonly kind: 'embedded';
  readonly receiver: SignedUrlReceiver;
  /** The HMAC secret of the upload URLs. */
  readonly secret: string;
  /** The folder that holds the objects. */
  readonly root: string;
}

/** Temporary files of another host (a shared DATA_DIR), or of no known owner, are removed after this. */
const STALE_TEMP_MS = 24 * 3600 * 1000;

/**
 * True when no live upload can own this temporary file: it is named `<host>.<pid>.<uuid>.part`, and on
 * this host that process is this one (starting: none of its uploads is live yet, so the file is a
 * leftover of a crashed process that had the same id, as pid 1 in a container) or is gone. Files of
 * other hosts (a shared DATA_DIR) and of the older naming wait for STALE_TEMP_MS.
 */
function isLeftover(name: string, ageMs: number): boolean {
  const match = /^(.+)\.(\d+)\.[0-9a-f-]{36}\.part$/.exec(name);
  if (match && match[1] === TEMP_FILE_HOST) {
    const pid = Number(match[2]);
    return pid === process.pid || !isAlive(pid);
  }
  return ageMs > STALE_TEMP_MS;
}

/** The secret in `path`, or undefined when there is no such file; throws when it holds no usable one. */
function readSigningSecret(path: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const secret = text.trim();
  // An empty secret would sign, and accept, URLs that anyone can make.
  if (secret.length < MIN_SIGNING_SECRET_LENGTH) {
    throw new Error(
      `${path} holds no usable signing secret (${secret.length} characters, at least ` +
        `${MIN_SIGNING_SECRET_LENGTH}): remove it to make a new one (URLs signed with the old one stop working)`,
    );
  }
  return secret;
}

/** Writes `text` to a new file at `path` and flushes it to disk. */
function writeDurably(path: string, text: string): void {
  const fd = openSync(path, 'wx', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Reads the signing secret from DATA_DIR, making one on first start, unless one is configured. */
export function loadSigningSecret(dataDir: string, configured: string | undefined): string {
  if (configured) return configured;
  const path = join(dataDir, 'storage-secret');
  const existing = readSigningSecret(path);
  if (existing !== undefined) return existing;
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(32).toString('hex');
  // Written whole under a name of its own, then linked into place: the secret's name appears with its
  // content or not at all, so a process starting beside this one (or after a crash) never reads it empty.
  const temp = `${path}.${process.pid}.${randomUUID()}.tmp`;
  writeDurably(temp, `${secret}\n`);
  try {
    linkSync(temp, path);
    return secret;
  } catch (error) {
    // Another process made it first: use theirs.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const theirs = readSigningSecret(path);
    if (theirs === undefined) throw error;
    return theirs;
  } finally {
    unlinkSync(temp);
  }
}

function removeStaleTempFiles(tmpDir: string): void {
  for (const name of readdirSync(tmpDir)) {
    const path = join(tmpDir, name);
    try {
      if (isLeftover(name, Date.now() - statSync(path).mtimeMs)) unlinkSync(path);
    } catch {
      // Gone already, or another process's: not ours to worry about.
    }
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** Opens the embedded backend. */
export function createEmbeddedStorage(options: {
  dataDir: string;
  publicUrl: string;
  secret: string | undefined;
}): EmbeddedStorage {
  const secret = loadSigningSecret(options.dataDir, options.secret);
  const root = join(options.dataDir, 'objects');
  // Beside the root, not in it, so no object key can name a temporary file.
  const tmpDir = join(options.dataDir, 'objects-tmp');
  mkdirSync(root, { recursive: true });
  mkdirSync(tmpDir, { recursive: true });
  removeStaleTempFiles(tmpDir);
  return {
    kind: 'embedded',
    secret,
    root,
    receiver: createSignedUrlReceiver({ secret, root, tmpDir }),
    async presignPut(objectKey: string, contentType: string, expiresIn: number): Promise<PresignedPut> {
      objectPath(root, objectKey);
      const expires = Math.floor(Date.now() / 1000) + expiresIn;
      return {
        url: signedPutUrl(options.publicUrl, secret, objectKey, contentType, expires),
        expiresIn,
        contentType,
      };
    },
    async presignGet(objectKey: string, contentType: string, expiresIn: number): Promise<PresignedGet> {
      objectPath(root, objectKey);
      const expires = Math.floor(Date.now() / 1000) + expiresIn;
      return { url: signedGetUrl(options.publicUrl, secret, objectKey, contentType, expires), expiresIn };
    },
    async head(objectKey: string): Promise<ObjectInfo | undefined> {
      try {
        const info = await stat(objectPath(root, objectKey));
        return info.isFile() ? { size: info.size } : undefined;
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw error;
      }
    },
    async open(objectKey: string): Promise<ObjectReader | undefined> {
      let handle: Awaited<ReturnType<typeof open>>;
      try {
        handle = await open(objectPath(root, objectKey), 'r');
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw error;
      }
      const { size } = await handle.stat();
      return {
        size,
        async read(offset: number, length: number): Promise<Uint8Array> {
          const buffer = Buffer.alloc(Math.max(0, Math.min(length, size - offset)));
          let filled = 0;
          while (filled < buffer.length) {
            const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, offset + filled);
            if (bytesRead === 0) break;
            filled += bytesRead;
          }
          return buffer.subarray(0, filled);
        },
        close: () => handle.close(),
      };
    },
    async delete(objectKey: string): Promise<void> {
      try {
        await unlink(objectPath(root, objectKey));
      } catch (error) {
        if (!isMissing(error)) throw error;
      }
    },
    async close(): Promise<void> {},
  };
}
