/** The call-handoff endpoints: the reader (spec 4.5) and the writer side (decision 18). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import { ValidationError } from '../../../domain/errors.ts';
import { createHandoffReader } from '../../../domain/handoffs/reader.ts';
import { createHandoff, finalizeHandoffRecord, mergeHandoff } from '../../../domain/handoffs/records.ts';
import { createHandoffWatcher } from '../../../domain/handoffs/watch.ts';
import type { Services } from '../../../services.ts';
import { answerRead, knownVersions, setHandoffHeaders } from '../../handoff-caching.ts';
import { absentBodyIsEmpty } from '../../optional-body.ts';
import { errorResponses } from '../../schemas/common.ts';
import {
  CREATE_DESCRIPTION,
  FINALIZE_DESCRIPTION,
  MERGE_DESCRIPTION,
  READ_DESCRIPTION,
} from '../../schemas/handoffs/docs.ts';
import {
  CreateBody,
  CreateConflictResponse,
  CreatedResponse,
  FinalConflictResponse,
  FinalizeBody,
  HandoffParams,
  MergeBody,
  NotModifiedResponse,
  ReadHeaders,
  ReadQuery,
  RecordResponse,
} from '../../schemas/handoffs/handoffs.ts';

const TAGS = ['call-handoff'];
const WRITE_ERRORS = [404, 413, 415, 422] as const;

// The schema would convert loosely ('' to 0, '0x10' to 16); a wait must be written as plain decimal seconds.
// A callback hook, as every read runs it.
function waitIsDecimal(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
  const wait = (request.query as Record<string, unknown>).wait;
  if (typeof wait === 'string' && !/^\d{1,3}(\.\d{1,6})?$/.test(wait)) {
    done(new ValidationError('must be a number of seconds from 0 to 30', 'query.wait'));
    return;
  }
  done();
}

/** The call-handoff routes. */
export const callHandoffRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (
  app,
  { services },
) => {
  const db = services.database.db;
  const reader = createHandoffReader({
    db,
    watcher: createHandoffWatcher(db, services.notifier),
    cache: services.handoffCache,
  });
  // Long polls answer at once on shutdown instead of holding it up for up to 30 seconds.
  app.addHook('preClose', async () => reader.close());

  app.get(
    '/api/v1/call-handoff/:handoff_id',
    {
      config: { scope: 'calls' },
      preValidation: waitIsDecimal,
      schema: {
        tags: TAGS,
        operationId: 'getCallHandoff',
        summary: 'Read a call-handoff record (check `final`)',
        description: READ_DESCRIPTION,
        params: HandoffParams,
        querystring: ReadQuery,
        headers: ReadHeaders,
        response: {
          200: RecordResponse,
          304: NotModifiedResponse,
          ...errorResponses(404, 422),
        },
      },
    },
    (request, reply) => {
      const ifNoneMatch = request.headers['if-none-match'];
      const waitMs = Math.round((request.query.wait ?? 0) * 1000);
      // Answered from memory without a promise when it can be: this runs on every poll.
      const now = reader.readNow(request.principal, request.params.handoff_id, waitMs);
      if (!now) return readAndAnswer(request, reply, ifNoneMatch, waitMs);
      answerRead(reply, now, ifNoneMatch);
    },
  );

  /** Reads the record (waiting as asked) and answers it. */
  async function readAndAnswer(
    request: FastifyRequest<{ Params: Static<typeof HandoffParams> }>,
    reply: FastifyReply,
    ifNoneMatch: string | undefined,
    waitMs: number,
  ): Promise<void> {
    // Only a long poll needs to know when its client goes away; a plain read skips the cost.
    let signal: AbortSignal | undefined;
    if (waitMs > 0) {
      const gone = new AbortController();
      reply.raw.once('close', () => gone.abort());
      // A client that left while the request awaited its authentication (Redis, a key look-up) closed the
      // socket before this listener was there: it would have been waited for until the deadline.
      if (request.raw.socket?.destroyed) gone.abort();
      signal = gone.signal;
    }
    const ended = waitMs > 0 ? services.metrics?.longPollStarted() : undefined;
    let handoff: Awaited<ReturnType<typeof reader.read>>;
    try {
      handoff = await reader.read(request.principal, request.params.handoff_id, {
        waitMs,
        knownVersions: knownVersions(ifNoneMatch, request.params.handoff_id),
        ...(signal ? { signal } : {}),
      });
    } finally {
      ended?.();
    }
    return answerRead(reply, handoff, ifNoneMatch);
  }

  app.post(
    '/api/v1/call-handoff',
    {
      config: { scope: 'handoff:write' },
      preValidation: absentBodyIsEmpty,
      schema: {
        tags: TAGS,
        operationId: 'createCallHandoff',
        summary: 'Create a call-handoff record (writer)',
        description: CREATE_DESCRIPTION,
        body: CreateBody,
        response: {
          201: CreatedResponse,
          ...errorResponses(...WRITE_ERRORS),
          409: CreateConflictResponse,
        },
      },
    },
    async (request, reply) => {
      const handoff = await createHandoff(db, request.principal, request.body);
      setHandoffHeaders(reply, handoff);
      reply.header('location', `/api/v1/call-handoff/${handoff.view.handoff_id}`);
      return reply.code(201).send(handoff.view);
    },
  );

  app.patch(
    '/api/v1/call-handoff/:handoff_id',
    {
      config: { scope: 'handoff:write' },
      schema: {
        tags: TAGS,
        operationId: 'updateCallHandoff',
        summary: 'Merge metadata into a call-handoff record (writer)',
        description: MERGE_DESCRIPTION,
        params: HandoffParams,
        body: MergeBody,
        response: { 200: RecordResponse, ...errorResponses(...WRITE_ERRORS), 409: FinalConflictResponse },
      },
    },
    async (request, reply) => {
      const handoff = await mergeHandoff(
        db,
        request.principal,
        request.params.handoff_id,
        request.body.metadata,
        services.handoffCache,
      );
      setHandoffHeaders(reply, handoff);
      return handoff.view;
    },
  );

  app.post(
    '/api/v1/call-handoff/:handoff_id/finalize',
    {
      config: { scope: 'handoff:write' },
      preValidation: absentBodyIsEmpty,
      schema: {
        tags: TAGS,
        operationId: 'finalizeCallHandoff',
        summary: 'Finalize a call-handoff record (writer)',
        description: FINALIZE_DESCRIPTION,
        params: HandoffParams,
        body: FinalizeBody,
        response: { 200: RecordResponse, ...errorResponses(...WRITE_ERRORS), 409: FinalConflictResponse },
      },
    },
    async (request, reply) => {
      const handoff = await finalizeHandoffRecord(
        db,
        request.principal,
        request.params.handoff_id,
        request.body.metadata,
        services.handoffCache,
      );
      setHandoffHeaders(reply, handoff);
      return handoff.view;
    },
  );
};
