/**
 * The built web app as the service serves it, without a browser: the page that says to build it when its
 * files are missing or older than their sources, the redirect of /app (its query kept), gzip as
 * Accept-Encoding allows, and the first load's size budget. The browser's tests are in web-app.test.ts.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import Fastify from 'fastify';
import { appSourceHash, SOURCE_HASH_FILE } from '../packages/app/source-hash.ts';
import { loadConfig } from '../src/config/config.ts';
import { APP_DIST, webAppRoutes } from '../src/http/routes/web-app.ts';

const APP_ROOT_FOR_TEST = join(APP_DIST, '..');

describe('the built web app', () => {
  it('answers a page that says how to build it when its files are missing', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'cqs-no-app-'));
    const app = Fastify();
    try {
      await app.register(webAppRoutes, { config: loadConfig({}), dist: empty });
      const res = await app.inject({ method: 'GET', url: '/app/' });
      assert.equal(res.statusCode, 503);
      assert.match(res.body, /npm run app:build/);
      assert.match(String(res.headers['content-security-policy']), /default-src 'none'/);
    } finally {
      await app.close();
      await rm(empty, { recursive: true, force: true });
    }
  });

  it('serves no files older than their sources: built from other sources, or with no hash of them, a 503', async () => {
    const copy = await mkdtemp(join(tmpdir(), 'cqs-stale-app-'));
    const app = Fastify();
    try {
      await cp(APP_DIST, copy, { recursive: true });
      // The build beside the sources is current (npm install built it).
      const hash = (await readFile(join(APP_DIST, SOURCE_HASH_FILE), 'utf8')).trim();
      assert.equal(hash, appSourceHash(APP_ROOT_FOR_TEST));
      await writeFile(join(copy, SOURCE_HASH_FILE), 'f'.repeat(64));
      await app.register(webAppRoutes, { config: loadConfig({}), dist: copy });
      const stale = await app.inject({ method: 'GET', url: '/app/calls/x' });
      assert.equal(stale.statusCode, 503);
      assert.match(stale.body, /older than its sources/);
      assert.match(stale.body, /npm run app:build/);
      const noHash = Fastify();
      await rm(join(copy, SOURCE_HASH_FILE));
      await noHash.register(webAppRoutes, { config: loadConfig({}), dist: copy });
      assert.match((await noHash.inject({ method: 'GET', url: '/app/' })).body, /older than its sources/);
      await noHash.close();
      // Built files alone, without sources beside them, are served as they are.
      const alone = Fastify();
      await alone.register(webAppRoutes, { config: loadConfig({}), dist: copy, sources: copy });
      assert.equal((await alone.inject({ method: 'GET', url: '/app/' })).statusCode, 200);
      await alone.close();
    } finally {
      await app.close();
      await rm(copy, { recursive: true, force: true });
    }
  });

  it('keeps the query through /app, and sends gzip only where Accept-Encoding allows it', async () => {
    const app = Fastify();
    try {
      await app.register(webAppRoutes, { config: loadConfig({}) });
      const moved = await app.inject({ method: 'GET', url: '/app?state=live&tag=queue%3Abilling' });
      assert.equal(moved.statusCode, 302);
      assert.equal(moved.headers.location, '/app/?state=live&tag=queue%3Abilling');
      assert.equal((await app.inject({ method: 'GET', url: '/app' })).headers.location, '/app/');
      const encodingOf = async (acceptEncoding: string) =>
        (await app.inject({ method: 'GET', url: '/app/', headers: { 'accept-encoding': acceptEncoding } }))
          .headers['content-encoding'];
      assert.equal(await encodingOf('gzip, deflate, br'), 'gzip');
      assert.equal(await encodingOf('*'), 'gzip');
      assert.equal(await encodingOf('gzip;q=0, identity'), undefined);
      assert.equal(await encodingOf('*;q=0.5, gzip;q=0'), undefined);
      assert.equal(await encodingOf('identity'), undefined);
    } finally {
      await app.close();
    }
  });

  it('exists after install and its first load is at most 150 KB of JavaScript gzipped', () => {
    assert.ok(
      existsSync(join(APP_DIST, 'index.html')),
      `${APP_DIST} has no build: npm install runs it (prepare of @cqs/app), or npm run app:build`,
    );
    const index = readFileSync(join(APP_DIST, 'index.html'), 'utf8');
    const scripts = [...index.matchAll(/(?:src|href)="\/app\/(assets\/[^"]+\.js)"/g)].map(
      (m) => m[1] as string,
    );
    assert.ok(scripts.length > 0, 'index.html names its scripts');
    const gz = scripts.reduce((sum, s) => sum + gzipSync(readFileSync(join(APP_DIST, s))).length, 0);
    process.stderr.write(`FIGURE app_first_load_js_gzip_kb=${(gz / 1024).toFixed(1)}\n`);
    assert.ok(gz <= 150 * 1024, `${gz} bytes gzipped`);
    // No inline script, nothing from another origin.
    assert.doesNotMatch(index, /<script(?![^>]*\bsrc=)[^>]*>/);
    assert.doesNotMatch(index, /(?:src|href)="(?:https?:)?\/\//);
  });
});
