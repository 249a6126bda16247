#!/usr/bin/env node
// The published entry of the `cqs` command: Node 22.18+ runs the TypeScript sources directly.
import '../src/cli/main.ts';
