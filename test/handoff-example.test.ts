import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { readFinalHandoff } from '../examples/handoff-poller.ts';
import { createRecord, finalizeRecord, patchRecord, sleep } from './helpers/handoffs.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

for (const backend of BACKENDS) {
  describe(`the documented polling client (${backend})`, () => {
    let h: Harness;
    let baseUrl: string;
    before(async () => {
      h = await startHarness(backend);
      baseUrl = await h.app.listen({ port: 0, host: '127.0.0.1' });
    });
    after(() => h.close());

    function counting() {
      const statuses: number[] = [];
      const counted: typeof fetch = async (input, init) => {
        const res = await fetch(input, init);
        statuses.push(res.status);
        return res;
      };
      return { statuses, fetch: counted };
    }

    for (const wait of [25, 0]) {
      it(`returns only the final record (${wait ? 'long poll' : 'polling with back-off'})`, async (t) => {
        const c = await h.company();
        const { id } = await createRecord(h, c, { metadata: { step: 0 } });
        const counter = counting();
        const reading = readFinalHandoff(baseUrl, c.key, id, { wait, fetch: counter.fetch });
        for (let i = 1; i <= 5; i++) {
          await sleep(150);
          await patchRecord(h, c, id, { step: i });
        }
        await sleep(150);
        const fin = await finalizeRecord(h, c, id, { done: true });
        const record = await reading;
        assert.deepEqual(record, fin.json());
        t.diagnostic(`answers: ${counter.statuses.join(' ')}`);
        if (wait) assert.ok(counter.statuses.length <= 8, 'one answer per change, not a spin');
      });
    }

    it('gives up on a record that does not exist', async () => {
      const c = await h.company();
      await assert.rejects(readFinalHandoff(baseUrl, c.key, randomUUID(), { wait: 1 }), /404/);
    });
  });
}
