/**
 * GET /: where a person who opens the service's address in a browser (or curls it) finds the docs, instead
 * of a JSON 404. A browser gets a small HTML page (the web app first); anything else gets the same links as
 * JSON.
 */
import type { FastifyPluginAsync } from 'fastify';

const LINKS = {
  app: '/app/',
  docs: '/api/v1/docs',
  openapi: '/api/v1/openapi.json',
  health: '/healthz',
  ready: '/readyz',
} as const;

const HTML = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Call Quality Service</title></head>
<body>
<h1>Call Quality Service</h1>
<p>Find, play and tag calls in the web app: <a href="${LINKS.app}">${LINKS.app}</a> (sign in with an API key).</p>
<p>The API: Its documentation, with a page to try each call: <a href="${LINKS.docs}">${LINKS.docs}</a>.</p>
<p>The OpenAPI 3.1 document: <a href="${LINKS.openapi}">${LINKS.openapi}</a>.
Health: <a href="${LINKS.health}">${LINKS.health}</a>, readiness: <a href="${LINKS.ready}">${LINKS.ready}</a>.</p>
</body>
</html>
`;

/** The home route: links to the docs, as HTML for browsers and JSON otherwise. */
export const homeRoutes: FastifyPluginAsync = async (app) => {
  app.get('/', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    const accept = request.headers.accept ?? '';
    if (accept.includes('text/html')) return reply.type('text/html; charset=utf-8').send(HTML);
    return {
      name: 'Call Quality Service',
      message: `This is an API; its documentation is at ${LINKS.docs}.`,
      links: LINKS,
    };
  });
};
