/** The app factory: builds the Fastify app around open services. Listening is `server.ts`'s job. */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import type { EmbeddedStorage } from './adapters/storage/embedded.ts';
import { installAuth } from './http/auth.ts';
import { answerClientError, installErrorHandler } from './http/error-handler.ts';
import { loggerOptions } from './http/logging.ts';
import { registerOpenApi } from './http/openapi.ts';
import { registerRateLimit } from './http/rate-limit.ts';
import { callHandoffRoutes } from './http/routes/call-handoffs.ts';
import { callStateRoutes } from './http/routes/call-state.ts';
import { callRoutes } from './http/routes/calls.ts';
import { healthRoutes } from './http/routes/health.ts';
import { liveRoutes } from './http/routes/live.ts';
import { productRoutes } from './http/routes/products.ts';
import { answerUploadClientError, holdContinueForUploads, storageRoutes } from './http/routes/storage.ts';
import { uploadRoutes } from './http/routes/uploads.ts';
import { installTextGuard } from './http/text-guard.ts';
import { validatorCompiler } from './http/validation.ts';
import type { Services } from './services.ts';

/** Options of the app that are not configuration: where logs go. */
export interface AppOptions {
  logStream?: NodeJS.WritableStream;
  /** Called for every route as it is added (the docs test checks each one is documented). */
  onRoute?: (route: { method: string | string[]; url: string; hidden: boolean }) => void;
}

/** Builds the app; `ready()` has been awaited when it returns. */
export async function buildApp(services: Services, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: loggerOptions(services.config.logLevel, options.logStream),
    genReqId: () => randomUUID(),
    bodyLimit: services.config.bodyLimit,
    // Slow clients must not hold sockets for ever: headers and a whole request (an upload included) have
    // time limits, checked every second rather than Node's default 30 s.
    serverFactory: (handler) =>
      createServer(
        {
          headersTimeout: services.config.timeouts.headersMs,
          requestTimeout: services.config.timeouts.requestMs,
          connectionsCheckingInterval: 1000,
        },
        handler,
      ),
    // An idle socket is closed after 65 s: longer than the 30 s long poll.
    connectionTimeout: 65_000,
    // Behind a load balancer the client's address is in X-Forwarded-For.
    trustProxy: true,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false } },
    clientErrorHandler: (error, socket) => {
      if (!answerUploadClientError(error, socket)) answerClientError(error, socket);
    },
  });
  app.setValidatorCompiler(validatorCompiler);
  if (options.onRoute) {
    const observe = options.onRoute;
    app.addHook('onRoute', (route) => {
      observe({ method: route.method, url: route.url, hidden: Boolean(route.schema?.hide) });
    });
  }
  // JSON endpoints take JSON only: anything else is a 415 (decision 8).
  app.removeContentTypeParser('text/plain');
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  installErrorHandler(app);
  installTextGuard(app);
  await registerOpenApi(app, services.config.publicUrl);
  installAuth(app, services);
  await registerRateLimit(app, services);

  await app.register(healthRoutes, { services });
  await app.register(productRoutes, { services });
  await app.register(callRoutes, { services });
  await app.register(callStateRoutes, { services });
  await app.register(liveRoutes, { services });
  await app.register(callHandoffRoutes, { services });
  await app.register(uploadRoutes, { services });
  const storage = services.storage;
  // The embedded storage serves its own upload URLs; with S3, clients upload to S3.
  if (storage.kind === 'embedded') {
    await app.register(storageRoutes, { services, storage: storage as EmbeddedStorage });
    holdContinueForUploads(app.server);
  }

  await app.ready();
  return app;
}
