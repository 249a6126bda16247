/** @cqs/client's README documents every method and what the client does with the service's limits. */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { it } from 'node:test';
import { CqsClient, MAX_UPLOAD_BYTES } from '../packages/client/src/index.ts';
import { CqsNodeClient, DEFAULT_IDLE_TIMEOUT_MS } from '../packages/client/src/node.ts';
import { MAX_UPLOAD_BYTES as SERVICE_MAX_UPLOAD_BYTES } from '../src/domain/uploads/uploads.ts';

const README = new URL('../packages/client/README.md', import.meta.url);

/** The public methods a class adds to its prototype. */
function methods(prototype: object): string[] {
  return Object.getOwnPropertyNames(prototype).filter((name) => name !== 'constructor');
}

it('names every method of CqsClient and CqsNodeClient, the webhook helpers and the upload end states', async () => {
  const text = await readFile(README, 'utf8');
  for (const name of [...methods(CqsClient.prototype), ...methods(CqsNodeClient.prototype)]) {
    assert.ok(text.includes(`\`${name}(`), `README does not document ${name}`);
  }
  for (const name of [
    'verifyWebhook',
    'WebhookVerificationError',
    'fileSource',
    'createNodePut',
    'nodePut',
  ]) {
    assert.ok(text.includes(`\`${name}`), `README does not name ${name}`);
  }
  assert.match(text, /`ready`,\s+`rejected`\s+or\s+`expired`/);
  assert.match(text, /same-origin only/);
});

it("states the service's upload limit and the idle timeout's default as the client has them", async () => {
  const text = await readFile(README, 'utf8');
  assert.equal(MAX_UPLOAD_BYTES, SERVICE_MAX_UPLOAD_BYTES);
  assert.ok(text.includes(MAX_UPLOAD_BYTES.toLocaleString('en-US')), 'the limit in bytes');
  assert.ok(text.includes(`${DEFAULT_IDLE_TIMEOUT_MS} by default`), 'the idle timeout');
});
