import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config/config.ts';

describe('configuration', () => {
  it('has working defaults', () => {
    const c = loadConfig({});
    assert.equal(c.port, 8080);
    assert.equal(c.dataDir, './data');
    assert.equal(c.databaseUrl, undefined);
    assert.equal(c.uploadUrlExpiresIn, 3600);
    // Only this machine can reach a service started with no configuration.
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.publicUrl, 'http://127.0.0.1:8080');
    assert.equal(c.bootstrap, true);
    assert.equal(loadConfig({ HOST: '0.0.0.0' }).publicUrl, 'http://localhost:8080');
  });

  it('reads and converts variables', () => {
    const c = loadConfig({
      PORT: '9000',
      DATABASE_URL: 'postgres://u@h/db',
      PUBLIC_URL: 'https://cqs.example/',
      UPLOAD_URL_EXPIRES_IN: '60',
      CQS_BOOTSTRAP: 'false',
      LOG_LEVEL: 'warn',
    });
    assert.equal(c.port, 9000);
    assert.equal(c.databaseUrl, 'postgres://u@h/db');
    assert.equal(c.publicUrl, 'https://cqs.example');
    assert.equal(c.uploadUrlExpiresIn, 60);
    assert.equal(c.bootstrap, false);
    assert.equal(c.logLevel, 'warn');
  });

  it('names every bad variable in one error', () => {
    assert.throws(
      () =>
        loadConfig({
          PORT: 'x',
          UPLOAD_URL_EXPIRES_IN: '604801',
          DATABASE_URL: 'mysql://h',
          CQS_BOOTSTRAP: 'maybe',
          LOG_LEVEL: 'loud',
          STORAGE_BACKEND: 'ftp',
        }),
      (e: unknown) => {
        assert.ok(e instanceof ConfigError);
        for (const name of [
          'PORT',
          'UPLOAD_URL_EXPIRES_IN',
          'DATABASE_URL',
          'CQS_BOOTSTRAP',
          'LOG_LEVEL',
          'STORAGE_BACKEND',
        ]) {
          assert.match(e.message, new RegExp(name));
        }
        return true;
      },
    );
  });

  it('shows no secret in its errors: a URL without its password, a secret by its length', () => {
    const error = (() => {
      try {
        loadConfig({
          DATABASE_URL: 'postgress://cqs:S3cretPassw0rd@db.example/cqs',
          REDIS_URL: 'redis2://:R3disPass@cache:6379',
          STORAGE_SIGNING_SECRET: 'tooShortS3cret',
        });
      } catch (caught) {
        return (caught as Error).message;
      }
      return '';
    })();
    for (const secret of ['S3cretPassw0rd', 'R3disPass', 'tooShortS3cret'])
      assert.ok(!error.includes(secret), error);
    assert.match(error, /DATABASE_URL="postgress:\/\/cqs:\*\*\*@db\.example\/cqs"/);
    assert.match(error, /REDIS_URL="redis2:\/\/:\*\*\*@cache:6379"/);
    assert.match(error, /STORAGE_SIGNING_SECRET=\(14 characters, not shown\)/);
  });

  it('rejects an upload expiry below 1 second', () => {
    assert.throws(() => loadConfig({ UPLOAD_URL_EXPIRES_IN: '0' }), /UPLOAD_URL_EXPIRES_IN/);
  });

  it('takes a pool of 1 to 1000 PostgreSQL connections, 10 by default', () => {
    assert.equal(loadConfig({}).databasePoolSize, 10);
    assert.equal(loadConfig({ DB_POOL_MAX: '3' }).databasePoolSize, 3);
    assert.throws(() => loadConfig({ DB_POOL_MAX: '0' }), /DB_POOL_MAX/);
    assert.throws(() => loadConfig({ DB_POOL_MAX: '1001' }), /DB_POOL_MAX/);
  });

  it('needs a bucket for S3 storage', () => {
    assert.throws(() => loadConfig({ STORAGE_BACKEND: 's3' }), /S3_BUCKET/);
  });
});
