/** @cqs/client's read side against a real listening server: listCalls, getCall, recordingUrl, downloads, deleteCall. */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type CqsClient, CqsError } from '../packages/client/src/index.ts';
import { CqsNodeClient, type DownloadProgress, fileSource } from '../packages/client/src/node.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, type Harness } from './helpers/harness.ts';
import { startListening } from './helpers/listening.ts';
import { writeStereoWav } from './helpers/wav.ts';

const T0 = 1_763_985_600;

for (const backend of BACKENDS) {
  describe(`client: reading calls back (${backend})`, () => {
    let h: Harness;
    let baseUrl: string;
    let dir: string;
    before(async () => {
      ({ h, baseUrl } = await startListening(backend));
      dir = await mkdtemp(join(tmpdir(), 'cqs-client-calls-'));
    });
    after(async () => {
      await h.close();
      await rm(dir, { recursive: true, force: true });
    });

    /** A company, a client with an admin key that may write and read, and the paths it requested. */
    async function setup(): Promise<{ c: TestCompany; client: CqsNodeClient; requested: string[] }> {
      const c = await h.company();
      const { key } = await c.addKey(c.admin.id, ['calls', 'calls:read', 'calls:delete']);
      const requested: string[] = [];
      const client = new CqsNodeClient({
        baseUrl,
        apiKey: key,
        fetch: (input, init) => {
          requested.push(String(input).slice(baseUrl.length));
          return fetch(input, init);
        },
      });
      return { c, client, requested };
    }

    async function create(client: CqsClient, c: TestCompany, id: string, startTime: number, team: string) {
      await client.createCall({
        agent_email: c.agent.email,
        product_id: c.productId,
        conversation_id: id,
        start_time: startTime,
        tags: [{ key: 'team', value: team, type: 'string' }],
      });
    }

    it('listCalls iterates every page by cursor, newest first, asking for a page only when needed', async () => {
      const { c, client, requested } = await setup();
      for (let i = 0; i < 5; i++) await create(client, c, `list-${i}`, T0 + i, i % 2 === 0 ? 'blue' : 'red');
      requested.length = 0;
      const all = [];
      for await (const call of client.listCalls({}, { pageSize: 2 })) all.push(call.conversation_id);
      assert.deepEqual(all, ['list-4', 'list-3', 'list-2', 'list-1', 'list-0']);
      assert.equal(requested.length, 3, requested.join(' '));
      assert.ok(requested.every((p) => p.startsWith('/api/v1/calls?') && p.includes('limit=2')));

      requested.length = 0;
      for await (const call of client.listCalls({}, { pageSize: 2 })) {
        assert.equal(call.conversation_id, 'list-4');
        break;
      }
      assert.equal(requested.length, 1, 'stopping early asks for no further page');

      const blue = [];
      for await (const call of client.listCalls({ tag: 'team:blue', start_time_gte: T0 + 1 })) {
        blue.push(call.conversation_id);
      }
      assert.deepEqual(blue, ['list-4', 'list-2']);
      const both = [];
      for await (const call of client.listCalls({ tag: ['team', 'team:red'], conversation_id: 'list-3' })) {
        both.push(call.conversation_id);
      }
      assert.deepEqual(both, ['list-3']);
      await assert.rejects(
        async () => {
          for await (const _ of client.listCalls({ state: 'gone' as 'live' })) break;
        },
        (error: unknown) => error instanceof CqsError && error.status === 422,
      );
    });

    it('getCall reads one call; recordingUrl and downloadRecording fetch its recording into a file', async () => {
      const { c, client } = await setup();
      const wav = join(dir, 'in.wav');
      const size = await writeStereoWav(wav, 1_500_000);
      const { status } = await client.uploadRecording({
        agent_email: c.agent.email,
        product_id: c.productId,
        conversation_id: 'with-recording',
        filename: 'in.wav',
        body: await fileSource(wav),
      });
      assert.equal(status.status, 'ready');
      let id = '';
      for await (const call of client.listCalls({ conversation_id: 'with-recording' })) id = call.id;
      const call = await client.getCall(id);
      assert.equal(call.conversation_id, 'with-recording');
      assert.equal(call.uploads[0]?.size, size);

      const link = await client.recordingUrl(id);
      assert.equal(link.content_type, 'audio/wav');
      assert.equal(link.size, size);

      const out = join(dir, 'out.wav');
      const progress: DownloadProgress[] = [];
      const result = await client.downloadRecording(id, out, { onProgress: (p) => progress.push(p) });
      assert.deepEqual(result, { path: out, size, contentType: 'audio/wav' });
      assert.deepEqual(await readFile(out), await readFile(wav));
      assert.ok(progress.length > 1);
      for (let i = 1; i < progress.length; i++) {
        assert.ok((progress[i]?.received ?? 0) > (progress[i - 1]?.received ?? 0), 'progress grows');
      }
      assert.deepEqual(progress.at(-1), { received: size, total: size });
    });

    it('answers CqsError 404 for a call without a recording or not visible, and leaves no file behind', async () => {
      const { c, client } = await setup();
      await create(client, c, 'silent', T0, 'blue');
      let id = '';
      for await (const call of client.listCalls({ conversation_id: 'silent' })) id = call.id;
      const notFound = (error: unknown) => error instanceof CqsError && error.status === 404;
      await assert.rejects(client.recordingUrl(id), notFound);
      const out = join(dir, 'missing', 'x.wav');
      await assert.rejects(client.downloadRecording(id, out), notFound);
      const other = await setup();
      await assert.rejects(other.client.getCall(id), notFound);

      // A signed URL whose object is gone: the storage's S3 error becomes a CqsError, and no file stays.
      const wav = join(dir, 'gone.wav');
      await writeStereoWav(wav, 200_000);
      await client.uploadRecording({
        agent_email: c.agent.email,
        product_id: c.productId,
        conversation_id: 'gone',
        filename: 'gone.wav',
        body: await fileSource(wav),
      });
      for await (const call of client.listCalls({ conversation_id: 'gone' })) id = call.id;
      const link = await client.recordingUrl(id);
      await h.services.storage.delete(
        decodeURIComponent(new URL(link.url).pathname.split('/object/')[1] ?? ''),
      );
      const target = join(dir, 'gone-out.wav');
      await assert.rejects(
        client.downloadRecording(id, target),
        (error: unknown) => notFound(error) && /NoSuchKey/.test((error as CqsError).error),
      );
      assert.deepEqual(
        (await readdir(dir)).filter((f) => f.startsWith('gone-out')),
        [],
      );
    });

    it('addTagsToCall tags the call named by its id, and answers CqsError 404 for one it may not see', async () => {
      const { c, client, requested } = await setup();
      await create(client, c, 'by-id', 1_767_000_000, 'blue');
      let id = '';
      for await (const call of client.listCalls({ conversation_id: 'by-id' })) id = call.id;
      assert.deepEqual(await client.addTagsToCall(id, [{ key: 'team', type: 'string', value: 'red' }]), {
        success: true,
      });
      assert.ok(requested.includes(`/api/v1/calls/${id}/tags`), requested.join(' '));
      assert.deepEqual(
        (await client.getCall(id)).tags.map((t) => [t.key, t.value]),
        [['team', 'red']],
      );
      const other = await setup();
      await assert.rejects(
        other.client.addTagsToCall(id, [{ key: 'team', type: 'string', value: 'x' }]),
        (error: unknown) => error instanceof CqsError && error.status === 404,
      );
    });

    it('deleteCall erases the call and its recording; a second deleteCall is a 404, a non-admin or read-only key a 403', async () => {
      const { c, client } = await setup();
      const wav = join(dir, 'erase.wav');
      await writeStereoWav(wav, 200_000);
      await client.uploadRecording({
        agent_email: c.agent.email,
        product_id: c.productId,
        conversation_id: 'to-erase',
        filename: 'erase.wav',
        body: await fileSource(wav),
      });
      let id = '';
      for await (const call of client.listCalls({ conversation_id: 'to-erase' })) id = call.id;
      const link = await client.recordingUrl(id);
      const status = (code: number) => (error: unknown) => error instanceof CqsError && error.status === code;

      const agentKey = (await c.addKey(c.agent.id, ['calls:read', 'calls:delete'])).key;
      await assert.rejects(new CqsNodeClient({ baseUrl, apiKey: agentKey }).deleteCall(id), status(403));
      const readOnly = (await c.addKey(c.admin.id, ['calls:read'])).key;
      await assert.rejects(new CqsNodeClient({ baseUrl, apiKey: readOnly }).deleteCall(id), status(403));
      assert.equal((await client.getCall(id)).id, id, 'refused erasures leave the call whole');

      assert.equal(await client.deleteCall(id), undefined);
      await assert.rejects(client.getCall(id), status(404));
      await assert.rejects(client.recordingUrl(id), status(404));
      await assert.rejects(client.deleteCall(id), status(404));
      const ids = [];
      for await (const call of client.listCalls({ conversation_id: 'to-erase' })) ids.push(call.id);
      assert.deepEqual(ids, []);
      // The URL signed before the erasure now finds no object.
      const res = await fetch(link.url);
      assert.equal(res.status, 404);
      assert.match(await res.text(), /<Code>NoSuchKey<\/Code>/);
    });
  });
}
