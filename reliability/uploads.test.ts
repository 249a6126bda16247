/**
 * Uploads under faults: a client that disconnects half way, a full disk (a small tmpfs this test mounts) and
 * two uploads to the same URL at once. No partial or corrupt object may be left.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdir, readFile, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createPostgresDatabase } from '../test/helpers/harness.ts';
import { call, figure, seedCompany, serve, tempDir } from './lib.ts';

async function files(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(join(e.parentPath, e.name));
  }
  return out;
}

function tryMount(dir: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=5m', 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('uploads under faults', { skip: !process.env.TEST_DATABASE_URL }, () => {
  it('leaves no partial or corrupt object', async () => {
    const db = await createPostgresDatabase();
    const dataDir = await tempDir('cqs-upfault-');
    const mounted = tryMount(dataDir);
    if (!mounted) console.log('  disk-full case skipped: mount -t tmpfs is not permitted here');
    const env = { DATA_DIR: dataDir, LOG_LEVEL: 'info', DATABASE_URL: db.url };
    const keys = await seedCompany(env, dataDir, 'uploads');
    const s = await serve(env);
    const statuses: Record<string, number> = {};
    const acknowledged: Buffer[] = [];
    try {
      const productId = (
        (await call(s.port, 'GET', '/api/v1/product/list', keys.calls)).body as { products: { id: number }[] }
      ).products[0]?.id;
      const newUrl = async (id: string) => {
        const r = await call(s.port, 'POST', '/api/v1/call/create', keys.calls, {
          agent_email: keys.agentEmail,
          product_id: productId,
          conversation_id: id,
          filename: `${id}.wav`,
          content_type: 'audio/wav',
        });
        assert.equal(r.status, 200);
        const u = new URL((r.body as { upload_url: string }).upload_url);
        return `http://127.0.0.1:${s.port}${u.pathname}${u.search}`;
      };
      const put = async (url: string, body: Buffer) => {
        try {
          const res = await fetch(url, {
            method: 'PUT',
            headers: { 'content-type': 'audio/wav' },
            body,
            signal: AbortSignal.timeout(30_000),
          });
          await res.arrayBuffer();
          if (res.status === 200) acknowledged.push(body);
          return res.status;
        } catch {
          return 0;
        }
      };
      // 1. The client disconnects half way.
      const half = new URL(await newUrl('half'));
      await new Promise<void>((resolve) => {
        const socket = connect(s.port, '127.0.0.1', () => {
          socket.write(
            `PUT ${half.pathname}${half.search} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: audio/wav\r\nContent-Length: 1000000\r\n\r\n`,
          );
          socket.write(Buffer.alloc(300_000, 1), () => {
            setTimeout(() => {
              socket.destroy();
              resolve();
            }, 200);
          });
        });
        socket.on('error', () => resolve());
      });
      // 2. Two uploads to the same URL at once.
      const same = await newUrl('same');
      const [x, y] = await Promise.all([
        put(same, Buffer.alloc(1_000_000, 2)),
        put(same, Buffer.alloc(1_200_000, 3)),
      ]);
      statuses.concurrent_first = x;
      statuses.concurrent_second = y;
      // 3. The disk is full.
      if (mounted) statuses.disk_full = await put(await newUrl('full'), Buffer.alloc(8_000_000, 4));
      await new Promise((r) => setTimeout(r, 1000));
      const objects = await files(join(dataDir, 'objects'));
      const temps = await files(join(dataDir, 'objects-tmp'));
      let bad = temps.length;
      for (const f of objects) {
        const content = await readFile(f);
        if (!acknowledged.some((b) => b.equals(content))) bad++;
      }
      for (const [k, v] of Object.entries(statuses)) figure(`uploads_status_${k}`, v);
      figure('uploads_objects_left', objects.length);
      figure('uploads_partial_or_corrupt_objects_left', bad);
      assert.equal(bad, 0, `objects ${objects.join(', ')}; temp files ${temps.join(', ')}`);
    } finally {
      await s.kill();
      if (mounted) execFileSync('umount', [dataDir]);
      await rm(dataDir, { recursive: true, force: true });
      await db.drop();
    }
  });
});
