/**
 * Regressions of issue 18 (finding 10): X-Forwarded-For was believed from anyone (logged addresses, and the
 * per-address failed-auth limit, could be forged), and a body trickled at a few bytes a second held its
 * socket until REQUEST_TIMEOUT (15 minutes).
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config/config.ts';
import { type Harness, startHarness } from './helpers/harness.ts';

const LIST = '/api/v1/product/list';
const BAD_KEY = 'cqs_000000000000000000000000000000000000';

describe('TRUST_PROXY', () => {
  it('is off by default and takes addresses and CIDR ranges only', () => {
    assert.equal(loadConfig({}).trustProxy, false);
    assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.1, 192.168.0.0/16,::1' }).trustProxy, [
      '10.0.0.1',
      '192.168.0.0/16',
      '::1',
    ]);
    for (const bad of ['true', 'proxy.example', '10.0.0.0/33', '1']) {
      assert.throws(() => loadConfig({ TRUST_PROXY: bad }), ConfigError, bad);
    }
  });

  for (const trusted of [false, true]) {
    describe(trusted ? 'with the proxy trusted' : 'by default', () => {
      let h: Harness;
      before(async () => {
        h = await startHarness('pglite', {
          AUTH_FAILURE_MAX: '2',
          ...(trusted ? { TRUST_PROXY: '127.0.0.1' } : {}),
        });
      });
      after(() => h.close());

      it(trusted ? 'takes the client address from X-Forwarded-For' : 'ignores X-Forwarded-For', async () => {
        const answers: number[] = [];
        for (const forged of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) {
          const res = await h.app.inject({
            method: 'GET',
            url: LIST,
            remoteAddress: '127.0.0.1',
            headers: { authorization: `Bearer ${BAD_KEY}`, 'x-forwarded-for': forged },
          });
          answers.push(res.statusCode);
        }
        if (trusted) {
          // Three addresses, one failure each: none is limited.
          assert.deepEqual(answers, [401, 401, 401]);
          assert.match(h.logs(), /"remoteAddress":"203\.0\.113\.1"/);
        } else {
          // One address, whatever the header says: limited at the third failure.
          assert.deepEqual(answers, [401, 401, 429]);
          assert.doesNotMatch(h.logs(), /203\.0\.113/);
        }
      });
    });
  }
});

describe('minimum body rate', () => {
  let h: Harness;
  let port: number;
  before(async () => {
    h = await startHarness('pglite', { MIN_BODY_RATE: '1000', MIN_BODY_RATE_WINDOW: '1' });
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    port = (h.app.server.address() as { port: number }).port;
  });
  after(() => h.close());

  /** Sends a request head, then the body in `chunk`-byte pieces every `everyMs`; resolves with what came back. */
  function send(key: string, length: number, chunk: number, everyMs: number) {
    return new Promise<{ answer: string; sent: number }>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      let answer = '';
      let sent = 0;
      socket.on('error', () => {});
      socket.on('data', (d) => {
        answer += d;
        if (answer.includes('\r\n\r\n')) socket.destroy();
      });
      socket.write(
        `POST /api/v1/call/create HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`,
      );
      const body = Buffer.alloc(length, 0x20);
      const timer = setInterval(() => {
        if (socket.destroyed || sent >= length) return;
        socket.write(body.subarray(sent, sent + chunk));
        sent += chunk;
      }, everyMs);
      // 40 s cap: far longer than the 1 s window, far shorter than REQUEST_TIMEOUT (900 s).
      const cap = setTimeout(() => socket.destroy(), 40_000);
      socket.on('close', () => {
        clearInterval(timer);
        clearTimeout(cap);
        resolve({ answer, sent });
      });
    });
  }

  it('drops a body that trickles below the floor', async () => {
    const c = await h.company();
    // 20 bytes every 200 ms is 100 B/s, a tenth of the floor; the whole body would take 1,000 s.
    const { answer, sent } = await send(c.key, 100_000, 20, 200);
    assert.equal(answer, '', 'dropped without an answer');
    assert.ok(sent < 2000, `dropped after ${sent} bytes`);
  });

  it('leaves a body at the floor alone', async () => {
    const c = await h.company();
    // 300 bytes every 100 ms is 3 KB/s: the 6 KB body arrives in 2 s and is answered (a 400: spaces only).
    const { answer } = await send(c.key, 6000, 300, 100);
    assert.match(answer, /^HTTP\/1\.1 400 /);
  });
});
