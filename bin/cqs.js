#!/usr/bin/env node
// The entry of the `cqs` command (and of `npm start`): Node 22.18+ runs the TypeScript sources directly.
// The version check is a static import of plain JavaScript, evaluated before the dynamic import below
// loads any .ts file.
import './check-node.js';

// TypeBox from its bundle when `cqs prepare` made one (src/cli/typebox-bundle.ts): before any module
// imports TypeBox, so the process loads one copy of it.
const { useTypeboxBundle } = await import('../src/cli/typebox-bundle.ts');
useTypeboxBundle();
await import('../src/cli/main.ts');
