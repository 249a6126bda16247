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
import { appSourceHash, SOURCE_HASH_FILE } from '../../../packages/app/source-hash.ts';
import type { Config } from '../../config/config.ts';

/** The web app's package: its sources, and the build in `dist/`. */
const APP_ROOT = fileURLToPath(new URL('../../../packages/app/', import.meta.url));
/** Where `npm run build -w @cqs/app` writes the app. */
export const APP_DIST = join(APP_ROOT, 'dist/');

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

const buildPage = (title: string, why: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>
<body><h1>${title}</h1>
<p>${why}; to make them now: <code>npm run app:build</code>, then restart the service.</p>
</body></html>
`;
const NOT_BUILT = buildPage('The web app is not built', 'Its files are made at <code>npm install</code>');
const STALE = buildPage(
  'The web app’s files are older than its sources',
  'They were built from other sources than these (after a <code>git pull</code> without <code>npm install</code>, say), and would not match this service',
);

/**
 * The built files, or why there are none to serve: not built, or built from other sources than those
 * beside them (the hash the build wrote against the sources' own), so never files older than the sources.
 */
function loadBuild(dist: string, sources: string): { files: Map<string, StaticFile> } | { page: string } {
  if (!existsSync(join(dist, 'index.html'))) return { page: NOT_BUILT };
  const files = loadFiles(dist);
  const built = files.get(SOURCE_HASH_FILE)?.body.toString('utf8').trim();
  files.delete(SOURCE_HASH_FILE);
  const current = appSourceHash(sources);
  // Without sources (an installed copy of the built files alone) there is nothing to be older than.
  if (current !== null && built !== current) return { page: STALE };
  return { files };
}

/** True when Accept-Encoding names gzip (or `*`) with a weight above 0 (RFC 9110 12.5.3). */
export function acceptsGzip(header: string | undefined): boolean {
  let star = false;
  for (const part of (header ?? '').toLowerCase().split(',')) {
    const [coding = '', ...params] = part.split(';').map((s) => s.trim());
    const q = params.find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    if (coding === 'gzip' || coding === 'x-gzip') return weight > 0;
    if (coding === '*') star = weight > 0;
  }
  return star;
}

/** The /app/ routes. */
export const webAppRoutes: FastifyPluginAsync<{ config: Config; dist?: string; sources?: string }> = async (
  app,
  options,
) => {
  const build = loadBuild(options.dist ?? APP_DIST, options.sources ?? APP_ROOT);
  const files = 'files' in build ? build.files : null;
  const page = 'page' in build ? build.page : NOT_BUILT;
  if (page === STALE) {
    app.log.warn('the web app at /app/ is older than its sources: run `npm run app:build`, then restart');
  }
  const csp = contentSecurityPolicy(options.config);

  const send = (request: FastifyRequest, reply: FastifyReply, file: StaticFile, immutable: boolean) => {
    reply
      .header('content-security-policy', csp)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .header('vary', 'accept-encoding')
      .type(file.type);
    if (acceptsGzip(request.headers['accept-encoding'])) {
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
        .send(page);
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
  // The query goes along: a shared link to /app?state=live keeps its filters.
  app.get('/app', { config: { public: true }, schema: hidden }, async (request, reply) => {
    const query = request.url.indexOf('?');
    return reply.redirect(query < 0 ? '/app/' : `/app/${request.url.slice(query)}`);
  });
  app.get('/app/', { config: { public: true }, schema: hidden }, serve);
  app.get('/app/*', { config: { public: true }, schema: hidden }, serve);
};
