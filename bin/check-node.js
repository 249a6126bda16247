// Checks the running Node.js against package.json's `engines` before any TypeScript file is loaded:
// an older Node fails on a .ts file with ERR_UNKNOWN_FILE_EXTENSION, which says nothing about Node.
// Plain JavaScript with nothing newer than Node 12 can parse, so it runs (and explains) on old Nodes too.
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const wanted = /(\d+)\.(\d+)/.exec(pkg.engines.node);
const [needMajor, needMinor] = [Number(wanted[1]), Number(wanted[2])];
const [major, minor] = process.versions.node.split('.').map(Number);
// Node 23.0-23.5 do not strip TypeScript types by default either; 22.18+ and 23.6+ do.
const tooOld = major < needMajor || (major === needMajor && minor < needMinor) || (major === 23 && minor < 6);

if (tooOld) {
  const platform = process.platform === 'win32' ? 'win' : process.platform;
  const pkgName = `node-${platform}-${process.arch}`;
  const binDir = process.platform === 'win32' ? '' : '/bin';
  process.stderr.write(
    [
      `cqs: Node.js ${needMajor}.${needMinor} or newer is needed (package.json "engines": "${pkg.engines.node}"; it runs its TypeScript sources directly), but this is Node.js ${process.versions.node} (${process.execPath}).`,
      'Get a newer Node.js, for example:',
      '  - from https://nodejs.org/ or your package manager, or with a version manager: nvm install 24',
      `  - from the npm registry, without root (as .ci/run does): npm install --prefix ~/.node24 ${pkgName}@24`,
      `    then: export PATH="$HOME/.node24/node_modules/${pkgName}${binDir}:$PATH"`,
      '',
    ].join('\n'),
  );
  process.exit(2);
}
