/** The OpenAPI descriptions of the call-handoff endpoints, with a worked example of a correct poller. */

/** Description of GET /api/v1/call-handoff/{handoff_id}. */
export const READ_DESCRIPTION = `Reads a call-handoff record (scope \`calls\`). All six fields are always present.

**Check \`final\` before trusting \`metadata\`**: while \`final\` is false the record is still
being written, keys may be missing or change, and \`finalized_at\` is null. Once \`final\` is true the record
never changes again. A record nobody finalizes is finalized by the service after \`HANDOFF_STALE_AFTER\`
seconds from its creation (default 4 hours), so a correct poller always ends.

**Caching.** Every answer carries a strong \`ETag\` (\`"<handoff_id>-v<version>"\`, new on every change).
Send it back as \`If-None-Match\` to get \`304 Not Modified\` (no body) while nothing changed. A final
record is served with \`Cache-Control: private, max-age=31536000, immutable\` and \`Vary: Authorization\`
(keep it forever, for the key that read it; the service also answers it from memory), a partial one with
\`Cache-Control: no-store\`.

**Long poll (extension).** \`?wait=N\` (seconds, 0–30, fractions allowed; outside: 422): when the record is not final, the answer
waits until it changes or becomes final, or N seconds pass. With an \`If-None-Match\` that names the current
version it waits for a newer version and answers 304 if none came in time; with an older tag it answers
at once. Changes are pushed to every service process (PostgreSQL LISTEN/NOTIFY), so waiting costs no
polling. Final records answer at once.

**A client that polls correctly** (JavaScript):

\`\`\`js
async function readFinalHandoff(baseUrl, apiKey, handoffId) {
  const url = \`\${baseUrl}/api/v1/call-handoff/\${handoffId}?wait=25\`;
  let etag;
  let failures = 0;
  for (;;) {
    const headers = { Authorization: \`Bearer \${apiKey}\` };
    if (etag) headers['If-None-Match'] = etag;
    const res = await fetch(url, { headers });
    if (res.status === 200) {
      failures = 0;
      etag = res.headers.get('etag');
      const record = await res.json();
      if (record.final) return record; // complete and immutable: done
      continue;                        // partial: ask again at once, the server does the waiting
    }
    if (res.status === 304) {          // nothing changed during the wait: ask again
      failures = 0;
      continue;
    }
    if (res.status === 429 || res.status >= 500) {
      // back off exponentially with full jitter, never less than Retry-After
      failures++;
      const retryAfter = Number(res.headers.get('retry-after')) || 0;
      const backoff = Math.random() * Math.min(30, 0.5 * 2 ** failures);
      await new Promise((r) => setTimeout(r, 1000 * Math.max(retryAfter, backoff)));
      continue;
    }
    throw new Error(\`handoff \${handoffId}: \${res.status} \${(await res.json()).error}\`); // 401/403/404/422
  }
}
\`\`\`

Without \`wait\`, poll with a delay that grows (for example 0.5 s doubling to 5 s, each with ±50 % jitter)
and still send \`If-None-Match\`. See \`docs/handoff-polling.md\`.`;

/** Description of POST /api/v1/call-handoff. */
export const CREATE_DESCRIPTION = `Creates a partial record (\`final: false\`) when a voice call starts; scope
\`handoff:write\`. Top-level metadata keys with a null value are dropped. With \`conversation_id\` (the
client's conversation id) the record is linked to that conversation of the caller's company; add
\`agent_email\` when several agents have a conversation with that id. The body may be omitted. Answers 201
with the record and \`Location\`.`;

/** Description of PATCH /api/v1/call-handoff/{handoff_id}. */
export const MERGE_DESCRIPTION = `Merges top-level metadata keys into a partial record (scope \`handoff:write\`):
sent keys are set (nested values replaced whole), keys sent as null are removed, other keys are kept.
The merge happens inside the database in one statement, so concurrent PATCHes never lose each other's
keys. Every PATCH is a change: \`updated_at\` and the ETag move. A final record: 409.`;

/** Description of POST /api/v1/call-handoff/{handoff_id}/finalize. */
export const FINALIZE_DESCRIPTION = `Applies a last merge (optional \`metadata\`, as PATCH) and finalizes the record
in one statement: \`final\` becomes true and \`finalized_at\` is set; the record never changes again. The body
may be omitted. Finalizing a final record again without metadata (or with \`{}\`) answers 200 with it
unchanged, so a retried finalize is safe; with metadata to merge it is a 409. A write that races a
finalize either lands before it or gets 409.`;
