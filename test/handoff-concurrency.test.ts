import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { TestCompany } from './helpers/fixtures.ts';
import {
  assertRecordShape,
  createRecord,
  finalizeRecord,
  type HandoffBody,
  patchRecord,
  readRecord,
} from './helpers/handoffs.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

const WRITERS = 50;

function versionOf(res: LightMyRequestResponse): number {
  const match = /-v(\d+)"$/.exec(String(res.headers.etag));
  assert.ok(match, `ETag ${res.headers.etag}`);
  return Number(match[1]);
}

for (const backend of BACKENDS) {
  describe(`call-handoff records under concurrent writers (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    it(`keeps every key of ${WRITERS} concurrent PATCHes, each a distinct version and a later updated_at`, async () => {
      const c = await h.company();
      const { id, body: created } = await createRecord(h, c, { metadata: { base: true } });
      const responses = await Promise.all(
        Array.from({ length: WRITERS }, (_, i) => patchRecord(h, c, id, { [`k${i}`]: i })),
      );
      for (const res of responses) assert.equal(res.statusCode, 200, res.body);
      const versions = responses.map(versionOf);
      assert.deepEqual(
        [...versions].sort((a, b) => a - b),
        Array.from({ length: WRITERS }, (_, i) => i + 2),
      );
      // In version order, updated_at strictly increases and each answer holds every earlier key.
      const ordered = responses
        .map((res, i) => ({ i, version: versionOf(res), body: res.json() as HandoffBody }))
        .sort((a, b) => a.version - b.version);
      let previous = created.updated_at;
      const keys = new Set(['base']);
      for (const { i, body } of ordered) {
        assertRecordShape(body);
        assert.ok(body.updated_at > previous, `${body.updated_at} > ${previous}`);
        previous = body.updated_at;
        keys.add(`k${i}`);
        assert.deepEqual(Object.keys(body.metadata).sort(), [...keys].sort());
      }
      const final = (await readRecord(h, c, id)).json() as HandoffBody;
      assert.equal(Object.keys(final.metadata).length, WRITERS + 1);
      for (let i = 0; i < WRITERS; i++) assert.equal(final.metadata[`k${i}`], i);
    });

    it('lets the highest version win when concurrent PATCHes write the same key', async () => {
      const c = await h.company();
      const { id } = await createRecord(h, c);
      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, i) => patchRecord(h, c, id, { same: i, [`own${i}`]: true })),
      );
      const last = responses.reduce((a, b) => (versionOf(a) > versionOf(b) ? a : b));
      const final = (await readRecord(h, c, id)).json() as HandoffBody;
      assert.deepEqual(final.metadata, last.json().metadata);
      assert.equal(Object.keys(final.metadata).length, 21);
    });

    /**
     * Checks what a finalize and PATCHes of one record did: each PATCH landed before the finalize (200, an
     * earlier version) or got 409, the final metadata holds exactly the keys that landed, and after the
     * finalize nothing moves. Returns the indexes of the PATCHes that landed and of those refused.
     */
    async function checkFinalizeOutcome(
      c: TestCompany,
      id: string,
      responses: LightMyRequestResponse[],
      fin: LightMyRequestResponse,
    ): Promise<{ landed: number[]; refused: number[] }> {
      assert.equal(fin.statusCode, 200, fin.body);
      const final = fin.json() as HandoffBody;
      assertRecordShape(final);
      assert.equal(final.final, true);
      const finalVersion = versionOf(fin);
      const landed: number[] = [];
      const refused: number[] = [];
      responses.forEach((res, i) => {
        if (res.statusCode === 200) {
          landed.push(i);
          const body = res.json() as HandoffBody;
          assert.equal(body.final, false);
          assert.equal(body.finalized_at, null);
          assert.ok(versionOf(res) < finalVersion, 'a PATCH that landed came before the finalize');
          assert.ok(body.updated_at < (final.finalized_at as string));
        } else {
          assert.equal(res.statusCode, 409, res.body);
          assert.deepEqual(Object.keys(res.json()), ['error']);
          refused.push(i);
        }
      });
      // Exactly the keys of the PATCHes that landed, plus the base and the finalize's own.
      assert.deepEqual(
        Object.keys(final.metadata).sort(),
        ['base', 'last', ...landed.map((i) => `k${i}`)].sort(),
      );
      for (const i of refused) assert.ok(!(`k${i}` in final.metadata));
      // One version per change: create, each landed PATCH, the finalize.
      assert.equal(finalVersion, 1 + landed.length + 1);
      // After the finalize nothing moves, whoever writes.
      const late = await Promise.all([
        patchRecord(h, c, id, { late: 1 }),
        finalizeRecord(h, c, id, { late: 2 }),
        finalizeRecord(h, c, id),
      ]);
      assert.deepEqual(
        late.map((r) => r.statusCode),
        [409, 409, 200],
      );
      assert.deepEqual(late[2]?.json(), final);
      const read = await readRecord(h, c, id);
      assert.deepEqual(read.json(), final);
      assert.equal(read.headers.etag, fin.headers.etag);
      return { landed, refused };
    }

    for (let round = 1; round <= 3; round++) {
      it(`round ${round}: a finalize racing ${WRITERS} PATCHes — each PATCH lands before it or gets 409`, async (t) => {
        const c = await h.company();
        const { id } = await createRecord(h, c, { metadata: { base: true } });
        // All sent at once, the finalize among them: the database decides who comes first, so how many
        // land varies from run to run; the rule holds whatever the order.
        const position = (round - 1) * 12;
        const patches: Promise<LightMyRequestResponse>[] = [];
        let finalizing: Promise<LightMyRequestResponse> | undefined;
        for (let i = 0; i < WRITERS; i++) {
          if (i === position) finalizing = finalizeRecord(h, c, id, { last: 'word' });
          patches.push(patchRecord(h, c, id, { [`k${i}`]: i }));
        }
        const responses = await Promise.all(patches);
        assert.ok(finalizing);
        const { landed, refused } = await checkFinalizeOutcome(c, id, responses, await finalizing);
        t.diagnostic(`${landed.length} PATCHes landed before the finalize, ${refused.length} got 409`);
      });
    }

    it('arranged: concurrent PATCHes answered before the finalize land, those sent after it get 409', async () => {
      // Both outcomes, each forced by the order of the requests rather than left to the scheduler.
      const c = await h.company();
      const { id } = await createRecord(h, c, { metadata: { base: true } });
      const before = await Promise.all(
        Array.from({ length: 5 }, (_, i) => patchRecord(h, c, id, { [`k${i}`]: i })),
      );
      const fin = await finalizeRecord(h, c, id, { last: 'word' });
      const later = await Promise.all(
        Array.from({ length: 5 }, (_, i) => patchRecord(h, c, id, { [`k${i + 5}`]: i + 5 })),
      );
      const { landed, refused } = await checkFinalizeOutcome(c, id, [...before, ...later], fin);
      assert.deepEqual(landed, [0, 1, 2, 3, 4]);
      assert.deepEqual(refused, [5, 6, 7, 8, 9]);
    });

    it('lets one of two racing finalizes with metadata win; two without metadata agree', async () => {
      const c = await h.company();
      const { id } = await createRecord(h, c);
      const [a, b] = await Promise.all([
        finalizeRecord(h, c, id, { who: 'a' }),
        finalizeRecord(h, c, id, { who: 'b' }),
      ]);
      const codes = [a?.statusCode, b?.statusCode].sort();
      assert.deepEqual(codes, [200, 409]);
      const winner = a?.statusCode === 200 ? a : b;
      assert.deepEqual((await readRecord(h, c, id)).json(), winner?.json());

      const other = await createRecord(h, c);
      const both = await Promise.all(Array.from({ length: 5 }, () => finalizeRecord(h, c, other.id)));
      for (const res of both) {
        assert.equal(res.statusCode, 200);
        assert.deepEqual(res.json(), both[0]?.json());
      }
    });
  });
}
