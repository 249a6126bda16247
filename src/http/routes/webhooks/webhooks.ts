/** Webhook endpoints (decision 27): management, test messages, the delivery log and redelivery. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { listDeliveryViews, redeliver, sendTestMessage } from '../../../domain/webhooks/deliveries.ts';
import {
  createEndpoint,
  listEndpointViews,
  patchEndpoint,
  removeEndpoint,
  requireEndpoint,
  rotateSecret,
  toEndpointView,
} from '../../../domain/webhooks/endpoints.ts';
import type { Services } from '../../../services.ts';
import { errorResponses } from '../../schemas/common.ts';
import { errorWithExamples } from '../../schemas/examples.ts';
import {
  Accepted,
  CreatedWebhookEndpoint,
  CreateWebhookBody,
  DeliveryList,
  DeliveryParams,
  PatchWebhookBody,
  RotatedSecret,
  TestAccepted,
  WebhookEndpoint,
  WebhookList,
  WebhookParams,
} from '../../schemas/webhooks/webhooks.ts';

const ACCESS = 'Needs a key of an admin with scope `webhooks`.';
const common = { tags: ['webhooks'], 'x-extension': true } as const;

/** The webhook routes. */
export const webhookRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { db } = services.database;
  const config = { scope: 'webhooks' as const, requireAdmin: true };

  app.post(
    '/api/v1/webhooks',
    {
      config,
      schema: {
        ...common,
        operationId: 'createWebhook',
        summary: 'Create a webhook endpoint',
        description:
          `Events of the company are POSTed to \`url\`, signed per Standard Webhooks. A company has at most ` +
          `\`WEBHOOK_ENDPOINTS_MAX\` (default 20) endpoints, enabled or not: a 409 past that. ${ACCESS}`,
        body: CreateWebhookBody,
        response: {
          201: CreatedWebhookEndpoint,
          ...errorResponses(415, 422),
          409: errorWithExamples('The company has as many endpoints as allowed; nothing was created.', {
            too_many_endpoints: [
              'WEBHOOK_ENDPOINTS_MAX endpoints exist already',
              'the company has 20 webhook endpoints, the most allowed (WEBHOOK_ENDPOINTS_MAX); delete one first',
            ],
          }),
        },
      },
    },
    async (request, reply) => {
      const created = await createEndpoint(db, request.principal, request.body, services.config.webhooks);
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/api/v1/webhooks',
    {
      config,
      schema: {
        ...common,
        operationId: 'listWebhooks',
        summary: 'List webhook endpoints',
        description: ACCESS,
        response: { 200: WebhookList, ...errorResponses() },
      },
    },
    async (request) => ({ webhooks: await listEndpointViews(db, request.principal) }),
  );

  app.get(
    '/api/v1/webhooks/:id',
    {
      config,
      schema: {
        ...common,
        operationId: 'getWebhook',
        summary: 'Show a webhook endpoint',
        description: ACCESS,
        params: WebhookParams,
        response: { 200: WebhookEndpoint, ...errorResponses(404, 422) },
      },
    },
    async (request) => toEndpointView(await requireEndpoint(db, request.principal, request.params.id)),
  );

  app.patch(
    '/api/v1/webhooks/:id',
    {
      config,
      schema: {
        ...common,
        operationId: 'updateWebhook',
        summary: 'Change a webhook endpoint',
        description: `Any of \`url\`, \`types\`, \`description\`, \`enabled\`. ${ACCESS}`,
        params: WebhookParams,
        body: PatchWebhookBody,
        response: { 200: WebhookEndpoint, ...errorResponses(404, 415, 422) },
      },
    },
    async (request) =>
      patchEndpoint(db, request.principal, request.params.id, request.body, services.config.webhooks),
  );

  app.delete(
    '/api/v1/webhooks/:id',
    {
      config,
      schema: {
        ...common,
        operationId: 'deleteWebhook',
        summary: 'Delete a webhook endpoint and its delivery log',
        description: ACCESS,
        params: WebhookParams,
        response: {
          204: { type: 'null', description: 'Deleted.' },
          ...errorResponses(404, 422),
        },
      },
    },
    async (request, reply) => {
      await removeEndpoint(db, request.principal, request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/v1/webhooks/:id/rotate-secret',
    {
      config,
      schema: {
        ...common,
        operationId: 'rotateWebhookSecret',
        summary: 'Rotate the signing secret',
        description: `For 24 hours deliveries carry both signatures, so a receiver can switch at leisure. ${ACCESS}`,
        params: WebhookParams,
        response: { 200: RotatedSecret, ...errorResponses(404, 422) },
      },
    },
    async (request) => rotateSecret(db, request.principal, request.params.id),
  );

  app.post(
    '/api/v1/webhooks/:id/test',
    {
      config,
      schema: {
        ...common,
        operationId: 'testWebhook',
        summary: 'Send a webhook.test message',
        description: `Sent to this endpoint whatever its \`types\`; not written to the event log. ${ACCESS}`,
        params: WebhookParams,
        response: { 202: TestAccepted, ...errorResponses(404, 422) },
      },
    },
    async (request, reply) => {
      const sent = await sendTestMessage(db, services.queue, request.principal, request.params.id);
      return reply.code(202).send(sent);
    },
  );

  app.get(
    '/api/v1/webhooks/:id/deliveries',
    {
      config,
      schema: {
        ...common,
        operationId: 'listWebhookDeliveries',
        summary: 'The delivery log of an endpoint',
        description: `The latest 100 deliveries, newest first, with every attempt. A delivery no longer pending is kept for EVENT_RETENTION_DAYS, as events are. ${ACCESS}`,
        params: WebhookParams,
        response: { 200: DeliveryList, ...errorResponses(404, 422) },
      },
    },
    async (request) => ({ deliveries: await listDeliveryViews(db, request.principal, request.params.id) }),
  );

  app.post(
    '/api/v1/webhooks/:id/deliveries/:delivery_id/redeliver',
    {
      config,
      schema: {
        ...common,
        operationId: 'redeliverWebhook',
        summary: 'Send a delivery again',
        description: `The same event with the same \`webhook-id\`, as a new round of attempts. ${ACCESS}`,
        params: DeliveryParams,
        response: { 202: Accepted, ...errorResponses(404, 422) },
      },
    },
    async (request, reply) => {
      await redeliver(db, services.queue, request.principal, request.params.id, request.params.delivery_id);
      return reply.code(202).send({ accepted: true });
    },
  );
};
