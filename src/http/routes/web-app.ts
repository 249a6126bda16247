/**
 * The web app at /app/: the files `packages/app` builds (at `npm install`, by its `prepare`), served by the
 * service itself with no key (the app asks for one and sends it as a Bearer header on its API calls).
 * Every answer carries a strict Content-Security-Policy: scripts and styles from this origin only, no
 * inline script, media and fetches from this origin (the signed recording URLs are on it with the embedded
 * storage) or the storage's. Paths under /app/ that are not files answer the app's page (its own routes).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config/config.ts';

/** Where `npm run build -w @cqs/app` writes the app. */
export const APP_DIST = fileURLToPath(new URL('../../../packages/app/dist/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
};

interface StaticFile {
  type: string;
  body: Buffer;
  gzip: Buffer;
}

/** The origins recordings are fetched from, besides this page's own: the public URL and S3's. */
function mediaOrigins(config: Config): string[] {
  const origins = new Set<string>();
  origins.add(new URL(config.publicUrl).origin);
  if (config.storage.backend === 's3') {
    const endpoint = config.storage.s3.endpoint;
    if (endpoint) {
      const url = new URL(endpoint);
      origins.add(url.origin);
      if (!config.storage.s3.forcePathStyle && config.storage.s3.bucket) {
        origins.add(`${url.protocol}//${config.storage.s3.bucket}.${url.host}`);
      }
    } else {
      origins.add('https://*.amazonaws.com');
    }
  }
  return [...origins];
}

/** The app's Content-Security-Policy. */
export function contentSecurityPolicy(config: Config): string {
  const media = ["'self'", ...mediaOrigins(config)].join(' ');
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `media-src ${media}`,
    `connect-src ${media}`,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Reads the built files into memory (a few tens of KB), gzipped once. */
function loadFiles(dir: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  const walk = (sub: string) => {
    for (const entry of readdirSync(join(dir, sub), { withFileTypes: true })) {
      const rel = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(rel);
      else {
        const body = readFileSync(join(dir, rel));
        const type = TYPES[extname(entry.name)] ?? 'application/octet-stream';
        files.set(rel, { type, body, gzip: gzipSync(body) });
      }
    }
  };
  walk('');
  return files;
}

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Web app not built</title></head>
<body><h1>The web app is not built</h1>
<p>Its files are made at <code>npm install</code>; to make them now: <code>npm run app:build</code>, then restart the service.</p>
</body></html>
`;

/** The /app/ routes. */
export const webAppRoutes: FastifyPluginAsync<{ config: Config; dist?: string }> = async (app, options) => {
  const dist = options.dist ?? APP_DIST;
  const files = existsSync(join(dist, 'index.html')) ? loadFiles(dist) : null;
  const csp = contentSecurityPolicy(options.config);

  const send = (request: FastifyRequest, reply: FastifyReply, file: StaticFile, immutable: boolean) => {
    reply
      .header('content-security-policy', csp)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .header('vary', 'accept-encoding')
      .type(file.type);
    if (/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) {
      return reply.header('content-encoding', 'gzip').send(file.gzip);
    }
    return reply.send(file.body);
  };

  const serve = async (request: FastifyRequest<{ Params: { '*'?: string } }>, reply: FastifyReply) => {
    if (!files) {
      return reply
        .code(503)
        .header('content-security-policy', csp)
        .type('text/html; charset=utf-8')
        .send(NOT_BUILT);
    }
    const path = request.params['*'] ?? '';
    const asset = files.get(path);
    // Built assets have a content hash in their name: cached for good. Anything else is the app's page.
    if (asset && path !== 'index.html') return send(request, reply, asset, path.startsWith('assets/'));
    if (path.startsWith('assets/')) {
      return reply.code(404).send({ error: 'no such file of the web app' });
    }
    const index = files.get('index.html');
    if (!index) return reply.code(503).send(NOT_BUILT);
    return send(request, reply, index, false);
  };

  const hidden = { hide: true };
  app.get('/app', { config: { public: true }, schema: hidden }, async (_request, reply) =>
    reply.redirect('/app/'),
  );
  app.get('/app/', { config: { public: true }, schema: hidden }, serve);
  app.get('/app/*', { config: { public: true }, schema: hidden }, serve);
};
