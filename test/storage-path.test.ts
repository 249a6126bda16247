import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import {
  checkSignedRequest,
  SIGNED_PARAMS,
  signedGetUrl,
  signedPutUrl,
} from '../src/adapters/storage/embedded-signer.ts';
import { UploadBodyError, writeObjectFile } from '../src/adapters/storage/embedded-writer.ts';
import { InvalidObjectKeyError, objectPath } from '../src/adapters/storage/object-path.ts';

describe('objectPath (the one guard between object keys and the file system)', () => {
  const root = '/srv/data/objects';

  it('maps a key under the root', () => {
    assert.equal(objectPath(root, 'company/object'), '/srv/data/objects/company/object');
    assert.equal(objectPath(`${root}/`, 'a/b/c.wav'), '/srv/data/objects/a/b/c.wav');
  });

  it('refuses every key that could leave the root or name something odd', () => {
    const bad = [
      '',
      '..',
      '../x',
      'a/../../x',
      'a/..',
      './a',
      'a/./b',
      '/etc/passwd',
      'a//b',
      'a/',
      '.hidden',
      'a/.tmp',
      'a\\..\\b',
      'a\u0000b',
      'a\nb',
      'a\u007fb',
      'x'.repeat(1025),
    ];
    for (const key of bad) {
      assert.throws(() => objectPath(root, key), InvalidObjectKeyError, JSON.stringify(key));
    }
  });
});

describe('checkSignedRequest (the one signed-URL verifier)', () => {
  const secret = 'a'.repeat(64);
  const key = 'company/object';
  const expires = 2_000_000_000;
  const query = () => new URL(signedPutUrl('http://x', secret, key, 'audio/wav', expires)).searchParams;
  const check = (over: Partial<Parameters<typeof checkSignedRequest>[1]>, now = expires - 10) =>
    checkSignedRequest(
      secret,
      { method: 'PUT', objectKey: key, query: query(), contentType: 'audio/wav', ...over },
      now,
    );

  it('accepts the request the URL was signed for, until it expires', () => {
    const ok = { ok: true, expires, contentType: 'audio/wav' };
    assert.deepEqual(check({}), ok);
    assert.deepEqual(check({}, expires), ok);
    assert.deepEqual(check({}, expires + 1), { ok: false, problem: 'expired', expires });
  });

  it('refuses another method, key, Content-Type, or any change to the query', () => {
    const mismatch = { ok: false, problem: 'mismatch' };
    assert.deepEqual(check({ method: 'GET' }), mismatch);
    assert.deepEqual(check({ objectKey: 'company/other' }), mismatch);
    const type = (sent: string | undefined) => ({
      ok: false,
      problem: 'content-type',
      expected: 'audio/wav',
      sent,
    });
    assert.deepEqual(check({ contentType: 'audio/mpeg' }), type('audio/mpeg'));
    assert.deepEqual(check({ contentType: 'Audio/WAV' }), type('Audio/WAV'));
    assert.deepEqual(check({ contentType: undefined }), type(undefined));
    // Only a valid signature learns which Content-Type was signed.
    assert.deepEqual(check({ method: 'GET', contentType: 'audio/mpeg' }), mismatch);
    const edits: ((q: URLSearchParams) => void)[] = [
      (q) => q.set(SIGNED_PARAMS.expires, String(expires + 1)),
      (q) => q.set(SIGNED_PARAMS.contentType, 'audio/mpeg'),
      (q) => q.set(SIGNED_PARAMS.signature, '0'.repeat(64)),
      (q) => q.set(SIGNED_PARAMS.signature, 'zz'),
      (q) => q.append('extra', '1'),
      (q) => q.append(SIGNED_PARAMS.signature, q.get(SIGNED_PARAMS.signature) ?? ''),
      (q) => q.delete(SIGNED_PARAMS.expires),
    ];
    for (const edit of edits) {
      const q = query();
      edit(q);
      assert.deepEqual(check({ query: q }), mismatch, q.toString());
    }
    assert.deepEqual(check({ query: new URLSearchParams() }), { ok: false, problem: 'missing' });
  });

  it('tolerates surrounding white space in the Content-Type, as SigV4 does', () => {
    assert.equal(check({ contentType: ' audio/wav ' }).ok, true);
  });

  it('checks a GET URL for GET and HEAD only, whatever Content-Type the reader sends', () => {
    const getQuery = () => new URL(signedGetUrl('http://x', secret, key, 'audio/wav', expires)).searchParams;
    const read = (over: Partial<Parameters<typeof checkSignedRequest>[1]>, now = expires - 10) =>
      checkSignedRequest(
        secret,
        { method: 'GET', objectKey: key, query: getQuery(), contentType: undefined, ...over },
        now,
      );
    const ok = { ok: true, expires, contentType: 'audio/wav' };
    assert.deepEqual(read({}), ok);
    assert.deepEqual(read({ method: 'HEAD' }), ok);
    assert.deepEqual(read({ contentType: 'text/plain' }), ok);
    assert.deepEqual(read({}, expires + 1), { ok: false, problem: 'expired', expires });
    const mismatch = { ok: false, problem: 'mismatch' };
    assert.deepEqual(read({ method: 'PUT', contentType: 'audio/wav' }), mismatch);
    assert.deepEqual(read({ objectKey: 'company/other' }), mismatch);
    const retyped = getQuery();
    retyped.set(SIGNED_PARAMS.contentType, 'text/html');
    assert.deepEqual(read({ query: retyped }), mismatch);
    // A PUT URL is no read URL.
    assert.deepEqual(read({ query: query() }), mismatch);
  });
});

describe('writeObjectFile', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cqs-writer-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('refuses a body that reaches the limit while streaming, and leaves nothing', async () => {
    const body = Readable.from([Buffer.alloc(600), Buffer.alloc(600)]);
    await assert.rejects(
      writeObjectFile(body, join(dir, 'big'), dir, {
        contentLength: 5000,
        maxBytes: 1000,
        idleTimeoutMs: 5000,
      }),
      (error: unknown) => error instanceof UploadBodyError && error.problem === 'EntityTooLarge',
    );
    assert.deepEqual(await readdir(dir), []);
  });

  it('refuses a body shorter than declared, and leaves nothing', async () => {
    const body = Readable.from([Buffer.from('short')]);
    await assert.rejects(
      writeObjectFile(body, join(dir, 'short'), dir, {
        contentLength: 10,
        maxBytes: 1000,
        idleTimeoutMs: 5000,
      }),
      (error: unknown) => error instanceof UploadBodyError && error.problem === 'IncompleteBody',
    );
    assert.deepEqual(await readdir(dir), []);
  });

  it('gives up on a body that stalls', async () => {
    const body = new Readable({ read() {} });
    body.push(Buffer.from('some'));
    await assert.rejects(
      writeObjectFile(body, join(dir, 'stalled'), dir, {
        contentLength: 10,
        maxBytes: 1000,
        idleTimeoutMs: 100,
      }),
      (error: unknown) => error instanceof UploadBodyError && error.problem === 'RequestTimeout',
    );
    assert.deepEqual(await readdir(dir), []);
  });

  it('stores a complete body and gives its MD5', async () => {
    const written = await writeObjectFile(
      Readable.from([Buffer.from('hello')]),
      join(dir, 'sub', 'ok'),
      dir,
      {
        contentLength: 5,
        maxBytes: 1000,
        idleTimeoutMs: 5000,
      },
    );
    assert.deepEqual(written, { size: 5, md5: '5d41402abc4b2a76b9719d911017c592' });
    assert.deepEqual(await readdir(join(dir, 'sub')), ['ok']);
  });
});
