/**
 * node:http without undici. An ESM import of a built-in module reads every one of its exports, and node:http's
 * `WebSocket`, `CloseEvent` and `MessageEvent` are getters that load undici, Node's fetch: 760 kB of
 * JavaScript and a WebAssembly HTTP parser, 14 MB resident in a process that never calls it (measured on
 * Node 24). The CommonJS exports object has the same functions and classes, and runs a getter only when
 * asked for it; `process.getBuiltinModule` hands it over without the ESM wrapper.
 */
import type * as NodeHttp from 'node:http';

const http = process.getBuiltinModule('node:http');

/** node:http's `Agent`, `createServer`, `IncomingMessage`, `request` and `STATUS_CODES`. */
export const { Agent, createServer, IncomingMessage, request, STATUS_CODES } = http;

/** node:http's types, for modules that may not import node:http themselves (the lint rule in biome.json). */
export type IncomingMessage = NodeHttp.IncomingMessage;
export type Server = NodeHttp.Server;
export type ServerResponse = NodeHttp.ServerResponse;
