/** The app factory: builds the Fastify app around open services. Listening is `server.ts`'s job. */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { createServer } from './adapters/http/node-http.ts';
import { installAuth } from './http/auth.ts';
import { enforceBodyRate } from './http/body-rate.ts';
import { answerClientError, answerFrameworkError, installErrorHandler } from './http/error-handler.ts';
import { installJsonBodyParser } from './http/json-body.ts';
import { loggerOptions, requestLogger } from './http/logging.ts';
import { installRequestMetrics, observeUnrouted } from './http/metrics.ts';
import { registerOpenApi } from './http/openapi.ts';
import { registerRateLimit } from './http/rate-limit.ts';
import { accessOf, installRouteAccess, type RouteAccess } from './http/route-access.ts';
import { productRoutes } from './http/routes/access/products.ts';
import { callRoutes } from './http/routes/calls/create-and-tags.ts';
import { liveRoutes } from './http/routes/calls/live.ts';
import { callReadRoutes } from './http/routes/calls/read.ts';
import { callRecordingRoutes } from './http/routes/calls/recording.ts';
import { callStateRoutes } from './http/routes/calls/start-stop.ts';
import { callTagsByIdRoutes } from './http/routes/calls/tags-by-id.ts';
import { callTranscribeRoutes } from './http/routes/calls/transcribe.ts';
import { eventRoutes } from './http/routes/events/events.ts';
import { callHandoffRoutes } from './http/routes/handoffs/handoffs.ts';
import { healthRoutes } from './http/routes/health.ts';
import { homeRoutes } from './http/routes/home.ts';
import {
  answerUploadClientError,
  holdContinueForUploads,
  storageRoutes,
} from './http/routes/uploads/storage.ts';
import { uploadRoutes } from './http/routes/uploads/uploads.ts';
import { webAppRoutes } from './http/routes/web-app.ts';
import { webhookRoutes } from './http/routes/webhooks/webhooks.ts';
import { installTextGuard } from './http/text-guard.ts';
import { validatorCompiler } from './http/validation.ts';
import type { Services } from './services.ts';

/** A route as the app registered it, with its access decision. */
export interface RegisteredRoute {
  method: string | string[];
  url: string;
  hidden: boolean;
  access: RouteAccess | undefined;
}

/** Options of the app that are not configuration: where logs go. */
export interface AppOptions {
  logStream?: NodeJS.WritableStream;
  /** Called for every route as it is added (tests check each one is documented and declares its access). */
  onRoute?: (route: RegisteredRoute) => void;
}

/** Builds the app; `ready()` has been awaited when it returns. */
export async function buildApp(services: Services, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: loggerOptions(services.config.logLevel, options.logStream),
    genReqId: () => randomUUID(),
    childLoggerFactory: requestLogger,
    bodyLimit: services.config.bodyLimit,
    // A path parameter up to a conversation_id of 255 characters, percent-encoded (Fastify's 100 answered
    // 414 to the live endpoints for one of 101 characters).
    routerOptions: { maxParamLength: 4096 },
    frameworkErrors: (error, request, reply) => {
      answerFrameworkError(error, request, reply);
      if (services.metrics) observeUnrouted(services.metrics, request.method, reply.statusCode);
    },
    // Slow clients must not hold sockets for ever: headers and a whole request (an upload included) have
    // time limits, checked every second rather than Node's default 30 s.
    serverFactory: (handler) => {
      const server = createServer(
        {
          headersTimeout: services.config.timeouts.headersMs,
          requestTimeout: services.config.timeouts.requestMs,
          connectionsCheckingInterval: 1000,
        },
        handler,
      );
      // A body that trickles in is dropped long before REQUEST_TIMEOUT.
      enforceBodyRate(server, services.config.minBodyRate);
      return server;
    },
    // An idle socket is closed after 65 s: longer than the 30 s long poll.
    connectionTimeout: 65_000,
    // X-Forwarded-For names the client only when it comes from a proxy of TRUST_PROXY: anyone can send it.
    trustProxy: services.config.trustProxy,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false } },
    clientErrorHandler: (error, socket) => {
      if (!answerUploadClientError(error, socket)) answerClientError(error, socket);
    },
  });
  app.setValidatorCompiler(validatorCompiler);
  // First, so that no route escapes the check: closed by default.
  installRouteAccess(app);
  if (options.onRoute) {
    const observe = options.onRoute;
    app.addHook('onRoute', (route) => {
      observe({
        method: route.method,
        url: route.url,
        hidden: Boolean(route.schema?.hide),
        access: accessOf(route.config),
      });
    });
  }
  // JSON endpoints take JSON only: anything else is a 415 (decision 8).
  app.removeContentTypeParser('text/plain');
  installJsonBodyParser(app);
  // A callback hook, not an async one: it runs on every request, and a promise per request costs.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  installErrorHandler(app);
  if (services.metrics) installRequestMetrics(app, services.metrics);
  installTextGuard(app);
  await registerOpenApi(app, services.config.publicUrl);
  installAuth(app, services);
  await registerRateLimit(app, services);

  await app.register(homeRoutes);
  await app.register(healthRoutes, { services });
  await app.register(productRoutes, { services });
  await app.register(callRoutes, { services });
  await app.register(callStateRoutes, { services });
  await app.register(liveRoutes, { services });
  await app.register(callReadRoutes, { services });
  await app.register(callRecordingRoutes, { services });
  await app.register(callTranscribeRoutes, { services });
  await app.register(callTagsByIdRoutes, { services });
  await app.register(callHandoffRoutes, { services });
  await app.register(uploadRoutes, { services });
  await app.register(eventRoutes, { services });
  await app.register(webhookRoutes, { services });
  await app.register(webAppRoutes, { config: services.config });
  // The embedded storage receives uploads at its own URLs; with S3, clients upload to S3.
  const receiver = services.storage.receiver;
  if (receiver) {
    await app.register(storageRoutes, { services, receiver });
    holdContinueForUploads(app.server, receiver.pathPrefix);
  }

  await app.ready();
  return app;
}
