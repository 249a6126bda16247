/**
 * The JSON body parser of every route. Before the body is parsed, one linear pass over its text (no
 * recursion) refuses, with 422 naming the field:
 * - nesting deeper than MAX_JSON_DEPTH (deeper values would overflow the stack of whatever walks them
 *   later: serialization, validation, the database driver);
 * - numbers that a JavaScript number cannot keep as sent (1e400 → Infinity, 1e-400 → 0, -0, 2^53 + 1,
 *   more significant digits than a double holds), which parsing would otherwise change silently;
 * - a top-level `metadata` object with more than MAX_METADATA_KEYS keys, or MAX_METADATA_KEYS_IN_ALL at
 *   every depth: counted here, in the same pass, because the schema's validation of 300,000 keys (before
 *   its own maxProperties could refuse them) held the event loop for seconds.
 * Everything else is Fastify's own parser (prototype-poisoning checks included).
 */
import { isUtf8 } from 'node:buffer';
import { errorCodes, type FastifyInstance } from 'fastify';
import { MAX_METADATA_KEYS, MAX_METADATA_KEYS_IN_ALL } from '../domain/limits.ts';

/** The deepest nesting of objects and arrays a JSON request body may have (the body itself is level 1). */
export const MAX_JSON_DEPTH = 32;

/** A refused body: the field (as `a.b[2].c`) and what is wrong with it. */
export interface JsonProblem {
  field: string;
  message: string;
}

interface Frame {
  array: boolean;
  /** Array index, or the key's text span [start, end) including its quotes. */
  index: number;
  keyStart: number;
  keyEnd: number;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
/**
 * At most 15 digits and no exponent: a double keeps every such value, -0 aside (15 is DBL_DIG: two numbers of
 * 15 significant digits lie further apart than a double's rounding interval, and the digits' count bounds the
 * value between 1e-15 and 1e15, far from subnormals and overflow).
 */
const SHORT_NUMBER = /^-?(?:\d{1,15}|(?=[\d.]{3,16}$)\d+\.\d+)$/;
const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** A decimal number's exact value as `sign digits e exponent`, so two spellings of one value compare equal. */
function exactValue(text: string): string {
  const m = DECIMAL.exec(text);
  if (!m) return text;
  const fraction = m[3] ?? '';
  let digits = (m[2] + fraction).replace(/^0+/, '');
  let exponent = BigInt(m[4] ?? '0') - BigInt(fraction.length);
  if (digits === '') return `${m[1]}0`;
  const trimmed = digits.replace(/0+$/, '');
  exponent += BigInt(digits.length - trimmed.length);
  digits = trimmed;
  return `${m[1]}${digits}e${exponent}`;
}

/** True when parsing `token` gives a number whose value is exactly the one written (so nothing changes). */
export function isNumberKept(token: string): boolean {
  const value = Number(token);
  // The exact comparison below made the scan of a create's body cost two or three times its JSON.parse.
  if (SHORT_NUMBER.test(token)) return !Object.is(value, -0);
  if (!Number.isFinite(value)) return false;
  // String() prints a number's shortest round-trip decimal form; -0 prints as "0", so -0 is refused too.
  return exactValue(token) === exactValue(String(value));
}

function fieldOf(text: string, stack: Frame[]): string {
  let out = '';
  for (const f of stack) {
    if (out.length > 200) return `${out}…`;
    if (f.array) out += `[${f.index}]`;
    else if (f.keyStart >= 0) {
      let key: string;
      try {
        key = JSON.parse(text.slice(f.keyStart, f.keyEnd)) as string;
      } catch {
        key = '?';
      }
      out += out ? `.${key}` : key;
    }
  }
  return out || 'body';
}

/** The key of an object frame as parsed (escapes resolved), or undefined. */
function keyText(text: string, frame: Frame): string | undefined {
  if (frame.keyStart < 0) return undefined;
  try {
    return JSON.parse(text.slice(frame.keyStart, frame.keyEnd)) as string;
  } catch {
    return undefined;
  }
}

/**
 * Scans JSON text for nesting deeper than `maxDepth` and for numbers parsing would change; returns the
 * first problem, or undefined. Malformed text is not judged here: the parser refuses it after.
 */
export function scanJson(text: string, maxDepth = MAX_JSON_DEPTH): JsonProblem | undefined {
  const stack: Frame[] = [];
  let expectKey = false;
  /** Stack depth of the top-level `metadata` object while the scan is inside it, else 0. */
  let metadataDepth = 0;
  let metadataTopKeys = 0;
  let metadataKeys = 0;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let end = i + 1;
      for (;;) {
        const q = text.indexOf('"', end);
        if (q < 0) return undefined;
        let slashes = 0;
        while (text.charCodeAt(q - 1 - slashes) === 0x5c) slashes++;
        end = q + 1;
        if (slashes % 2 === 0) break;
      }
      const top = stack[stack.length - 1];
      if (expectKey && top && !top.array) {
        top.keyStart = i;
        top.keyEnd = end;
        expectKey = false;
        if (metadataDepth > 0) {
          metadataKeys++;
          if (stack.length === metadataDepth) metadataTopKeys++;
          if (metadataTopKeys > MAX_METADATA_KEYS) {
            return { field: 'metadata', message: `more than ${MAX_METADATA_KEYS} top-level keys` };
          }
          if (metadataKeys > MAX_METADATA_KEYS_IN_ALL) {
            return { field: 'metadata', message: `more than ${MAX_METADATA_KEYS_IN_ALL} keys at all depths` };
          }
        }
      }
      i = end;
      continue;
    }
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (stack.length >= maxDepth) {
        return { field: fieldOf(text, stack), message: `nested deeper than ${maxDepth} levels` };
      }
      const array = c === 0x5b;
      const parent = stack[0];
      if (!array && stack.length === 1 && parent && !parent.array && keyText(text, parent) === 'metadata') {
        metadataDepth = 2;
        metadataTopKeys = 0;
        metadataKeys = 0;
      }
      stack.push({ array, index: 0, keyStart: -1, keyEnd: -1 });
      expectKey = !array;
      i++;
      continue;
    }
    if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      if (stack.length === metadataDepth) metadataDepth = 0;
      stack.pop();
      expectKey = false;
      i++;
      continue;
    }
    if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1];
      if (top?.array) top.index++;
      else expectKey = true;
      i++;
      continue;
    }
    if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(text);
      if (!m) return undefined;
      if (!isNumberKept(m[0])) {
        return {
          field: fieldOf(text, stack),
          message: `the number ${m[0].length > 40 ? `${m[0].slice(0, 40)}…` : m[0]} cannot be stored exactly (send it as a string)`,
        };
      }
      i += m[0].length;
      continue;
    }
    i++;
  }
  return undefined;
}

/** Replaces the app's JSON parser with one that scans the text first (422 for a refused body). */
export function installJsonBodyParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    // JSON is UTF-8: bytes that are not would be decoded with U+FFFD in their place, and stored so.
    if (typeof body !== 'string' && !isUtf8(body)) {
      const error = new Error('the body is not valid UTF-8') as Error & { statusCode: number };
      error.statusCode = 400;
      done(error, undefined);
      return;
    }
    const text = typeof body === 'string' ? body : body.toString('utf8');
    const problem = scanJson(text);
    if (problem) {
      const error = new Error(`${problem.field}: ${problem.message}`) as Error & { statusCode: number };
      error.statusCode = 422;
      done(error, undefined);
      return;
    }
    parse(request, text, done);
  });
  // Every other Content-Type is a 415, but for an empty body on a route that takes none: `curl -X POST -d ''`
  // sends `application/x-www-form-urlencoded`, and an upload's complete, a webhook's test or a DELETE
  // answered it 415, which their documents did not list.
  app.addContentTypeParser('*', (request, _payload, done) => {
    // No Content-Length nor Transfer-Encoding is a body of nothing too (RFC 9112 §6.3).
    const length = request.headers['content-length'];
    const empty =
      (length === undefined || length === '0') && request.headers['transfer-encoding'] === undefined;
    // No route: the not-found answer, as Fastify gives it when no parser matches (the body is not read).
    if (request.is404 || (empty && request.routeOptions.schema?.body === undefined)) {
      done(null, undefined);
      return;
    }
    done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(request.headers['content-type'] ?? ''), undefined);
  });
}
