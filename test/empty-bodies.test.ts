/**
 * A route that takes no body accepts an empty one whatever its Content-Type: `curl -X POST -d ''` sends
 * `application/x-www-form-urlencoded`, and an upload's complete, a webhook's test, a DELETE answered it 415,
 * which their documents did not list. A body that is there, or any body of a route that takes JSON, still
 * has to be JSON (decision 8: 415).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { addWebhookEndpoint } from './helpers/events.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

const FORM = 'application/x-www-form-urlencoded';

for (const backend of BACKENDS) {
  describe(`empty bodies of other Content-Types (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend, { WEBHOOK_ALLOW_PRIVATE: 'true' });
    });
    after(() => h.close());

    const send = (method: 'POST' | 'DELETE', url: string, key: string, type: string, payload: string) =>
      h.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${key}`, 'content-type': type },
        payload,
      });

    it('takes an empty body of any type on a route without one, and refuses a body that is not JSON', async () => {
      const c = await h.company();
      const { id, key } = await addWebhookEndpoint(h, c, { url: 'http://127.0.0.1:9/hook' });
      for (const type of [FORM, 'text/plain']) {
        const test = await send('POST', `/api/v1/webhooks/${id}/test`, key, type, '');
        assert.equal(test.statusCode, 202, `${type}: ${test.body}`);
      }
      const withBody = await send('POST', `/api/v1/webhooks/${id}/test`, key, FORM, 'a=1');
      assert.equal(withBody.statusCode, 415, withBody.body);
      assert.equal(withBody.json().error, 'unsupported Content-Type; send application/json');
      const deleted = await send('DELETE', `/api/v1/webhooks/${id}`, key, FORM, '');
      assert.equal(deleted.statusCode, 204, deleted.body);
    });

    it('still answers 415 to an empty body of another type on a route that takes JSON', async () => {
      const c = await h.company();
      const res = await send('POST', '/api/v1/call/create', c.key, FORM, '');
      assert.equal(res.statusCode, 415, res.body);
      const handoff = await send('POST', '/api/v1/call-handoff', c.writerKey, FORM, '');
      assert.equal(handoff.statusCode, 415, handoff.body);
      // A path no route serves is a 404, whatever its body.
      const nowhere = await send('POST', '/api/v1/no-such-route', c.key, 'text/plain', 'x');
      assert.equal(nowhere.statusCode, 404, nowhere.body);
    });
  });
}
