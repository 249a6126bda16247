/** On a Node.js too old to run the TypeScript sources, `cqs` and `npm start` say which Node is needed and how to get one. */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = new URL('..', import.meta.url).pathname;

/** Every `node` on PATH (and the usual system ones) older than 22.18, with its version. */
function oldNodes(): { path: string; version: string }[] {
  const candidates = new Set<string>(['/usr/bin/node', '/usr/local/bin/node']);
  for (const dir of (process.env.PATH ?? '').split(':')) if (dir) candidates.add(join(dir, 'node'));
  const found: { path: string; version: string }[] = [];
  for (const path of candidates) {
    if (!existsSync(path)) continue;
    let version: string;
    try {
      version = execFileSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
    } catch {
      continue;
    }
    const [major, minor] = version.split('.').map(Number) as [number, number];
    if (major < 22 || (major === 22 && minor < 18)) found.push({ path, version });
  }
  return found;
}

const old = oldNodes()[0];
const skip = old ? false : 'no Node.js older than 22.18 on this machine (.ci/run machines ship Node 20)';

function assertExplains(stderr: string, version: string): void {
  assert.match(stderr, /Node\.js 22\.18 or newer is needed/);
  assert.match(stderr, /"engines": ">=22\.18\.0"/);
  assert.ok(stderr.includes(`this is Node.js ${version}`), stderr);
  assert.match(stderr, /npm install --prefix ~\/\.node24 node-[a-z0-9]+-[a-z0-9]+@24/);
  assert.doesNotMatch(stderr, /ERR_UNKNOWN_FILE_EXTENSION/);
}

describe('the Node.js version check', () => {
  it('`npm start` goes through the JavaScript entry that checks the version first', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    // `exec`: the shell npm runs the script in becomes the server, so a SIGTERM sent to npm reaches it.
    assert.equal(pkg.scripts.start, 'exec node bin/cqs.js serve');
    assert.match(readFileSync(join(ROOT, '.npmrc'), 'utf8'), /^engine-strict=true$/m);
  });

  it('bin/cqs.js on an old Node exits 2 naming the needed and the running version', { skip }, () => {
    if (!old) return;
    const result = spawnSync(old.path, [join(ROOT, 'bin/cqs.js'), 'serve'], { encoding: 'utf8', cwd: ROOT });
    assert.equal(result.status, 2, result.stderr);
    assertExplains(result.stderr, old.version);
  });

  it('`npm start` on an old Node says the same', { skip }, () => {
    if (!old) return;
    const npm = join(dirname(old.path), 'npm');
    if (!existsSync(npm)) return;
    const result = spawnSync(npm, ['start'], {
      encoding: 'utf8',
      cwd: ROOT,
      env: {
        ...process.env,
        PATH: `${dirname(old.path)}:/usr/bin:/bin`,
        DATA_DIR: '/nonexistent-never-used',
      },
    });
    assert.notEqual(result.status, 0);
    assertExplains(result.stderr, old.version);
  });
});
