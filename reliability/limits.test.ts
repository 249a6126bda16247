/** The JSON body limit over a real socket: 413 arrives before the body is sent. */
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import { hashApiKey } from '../src/domain/access/api-keys.ts';
import { figure, seedCompany, serve, tempDir } from './lib.ts';

describe('JSON body size limit', () => {
  it('answers 413 on Content-Length over BODY_LIMIT before any body byte is sent', async () => {
    const dataDir = await tempDir('cqs-limit-');
    const env = { DATA_DIR: dataDir, LOG_LEVEL: 'info', BODY_LIMIT: '1048576' };
    const keys = await seedCompany(env, dataDir, 'limits');
    const s = await serve(env);
    try {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(s.port, '127.0.0.1');
        let got = '';
        const timer = setTimeout(() => {
          socket.destroy();
          reject(new Error(`no answer before the body: ${got}`));
        }, 10_000);
        socket.on('connect', () => {
          socket.write(
            `POST /api/v1/call/create HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${keys.calls}\r\n` +
              `Content-Type: application/json\r\nContent-Length: ${2 * 1048576}\r\n\r\n`,
          );
        });
        socket.on('data', (d) => {
          got += d;
          if (got.includes('\r\n\r\n')) {
            clearTimeout(timer);
            socket.destroy();
            resolve(got);
          }
        });
        socket.on('error', () => {});
      });
      const status = Number(answer.split(' ')[1]);
      figure('body_limit_status_before_body', status);
      assert.equal(status, 413, answer);
      const logs = s.output();
      const leaks = [keys.calls, keys.writer].filter(
        (k) => logs.includes(k) || logs.includes(k.slice(4, 20)) || logs.includes(hashApiKey(k)),
      ).length;
      figure('keys_in_logs', leaks);
      assert.equal(leaks, 0);
    } finally {
      await s.kill();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
