/** The OpenAPI 3.1 document at /api/v1/openapi.json and the offline docs page at /api/v1/docs. */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { API_KEY_QUERY_SUNSET } from './deprecation.ts';
import { takesAbsentBody } from './optional-body.ts';
import { registerPublic } from './route-access.ts';

const DESCRIPTION = `The Call Quality Service records customer-support calls (transcripts, or audio and video
recordings uploaded to signed URLs), their tags, live start and stop, and call-handoff records.

Authenticate with \`Authorization: Bearer <API key>\`. Keys look like \`cqs_\` followed by 36 base62
characters, the last 6 of which are a CRC32 checksum of the 30 before them. Each operation names the
scope its key needs (\`x-required-scope\`, and \`x-admin-only\` where the key's user must be an admin);
operations with \`security: []\` need no key.

Every non-2xx answer is JSON with at least \`error\`; validation problems are 422 and name the field.`;

/** The operation key that carries a route's optional body from its schema to the document's transform. */
const OPTIONAL_BODY = 'x-cqs-optional-body';

type Operation = Record<string, unknown> & { requestBody?: { required?: boolean } };

/** Marks the body of every operation whose route takes an absent body (optional-body.ts) not required. */
function optionalBodies(document: { paths?: Record<string, Record<string, Operation>> }): void {
  for (const path of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(path)) {
      if (!(OPTIONAL_BODY in operation)) continue;
      delete operation[OPTIONAL_BODY];
      if (operation.requestBody) operation.requestBody.required = false;
    }
  }
}

/** Registers the document generator and the docs page; call before any route is added. */
export async function registerOpenApi(app: FastifyInstance, publicUrl: string): Promise<void> {
  // Before the generator reads the routes: a schema key starting with x- is copied into the operation.
  app.addHook('onRoute', (route) => {
    if (route.schema && takesAbsentBody(route))
      (route.schema as Record<string, unknown>)[OPTIONAL_BODY] = true;
  });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Call Quality Service API',
        version: '1.0.0',
        description: DESCRIPTION,
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: publicUrl }],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'The API key as a Bearer token: `Authorization: Bearer cqs_…`.',
          },
          apiKeyQuery: {
            type: 'apiKey',
            in: 'query',
            name: 'api_key',
            description:
              'Deprecated (OpenAPI 3.1 has no `deprecated` field on a security scheme, hence ' +
              '`x-deprecated`): the API key as the `api_key` query parameter. Answers carry `Deprecation`, ' +
              `\`Sunset: ${API_KEY_QUERY_SUNSET}\` and \`Link\` headers. Sending a key both ways is a 400.`,
            'x-deprecated': true,
          } as never,
        },
      },
      tags: [
        { name: 'calls', description: 'Create, tag, start and stop calls.' },
        { name: 'uploads', description: 'Media uploads and their verification.' },
        { name: 'call-handoff', description: 'Call-handoff records: read them, and (writers) build them.' },
        { name: 'products', description: 'Products the caller may file calls under.' },
        { name: 'live', description: 'Deprecated live-conversation endpoints; use call/add_tags.' },
        { name: 'service', description: 'Health and readiness.' },
      ],
    },
    transformObject: (documents) => {
      const { openapiObject } = documents as { openapiObject: Parameters<typeof optionalBodies>[0] };
      optionalBodies(openapiObject);
      return openapiObject as never;
    },
  });
  // The docs page's routes are the plugin's, so they are declared public as a group.
  await registerPublic(app, swaggerUi, {
    routePrefix: '/api/v1/docs',
    // validatorUrl null: the page must make no request off this machine.
    uiConfig: { validatorUrl: null, deepLinking: true, tryItOutEnabled: true },
    staticCSP: true,
    // The plugin's policy, less two parts. upgrade-insecure-requests: on plain http anywhere but loopback (a
    // service on a private network) the browser asked for every script and style over https, and the page
    // stayed blank. The validator's host: the page asks no validator (validatorUrl null).
    transformStaticCSP: (header: string) =>
      header.replace(/\s*upgrade-insecure-requests;?/, '').replace(/ validator\.swagger\.io/, ''),
  });
  app.get('/api/v1/openapi.json', { config: { public: true }, schema: { hide: true } }, async () =>
    app.swagger(),
  );
}
