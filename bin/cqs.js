#!/usr/bin/env node
// The entry of the `cqs` command (and of `npm start`): Node 22.18+ runs the TypeScript sources directly.
// The version check is a static import of plain JavaScript, evaluated before the dynamic import below
// loads any .ts file.
import './check-node.js';

await import('../src/cli/main.ts');
