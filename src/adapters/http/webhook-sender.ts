/**
 * Sends one webhook request: a POST with a time limit, no redirects followed, and only the start of the
 * response body kept. Unless private addresses are allowed, the address a name resolves to is checked
 * when connecting (a custom `lookup`, through `host-resolver.ts`), so a name that resolves to a public
 * address at create time and to a private one later (DNS rebinding) is refused too.
 */
import type { LookupAddress } from 'node:dns';
import https from 'node:https';
import { isIPv6, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { type HostResolver, hostResolver } from './host-resolver.ts';
import { Agent as HttpAgent, request as httpRequest } from './node-http.ts';

/** The characters of a response body kept in the delivery log. */
export const RESPONSE_EXCERPT_LENGTH = 500;

/** True for an address on the public internet (not loopback, private, link-local, reserved, …). */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    // An IPv4-compatible address (::a.b.c.d, deprecated by RFC 4291) is a unicast to ipaddr.js, but a
    // stack that still routes it reaches the IPv4 address: judged as that address, like a mapped one.
    const compatible = v6.parts.slice(0, 6).every((p) => p === 0) && v6.range() === 'unicast';
    if (v6.isIPv4MappedAddress() || compatible) {
      const [a, b, c, d] = v6.toByteArray().slice(12);
      parsed = ipaddr.fromByteArray([a ?? 0, b ?? 0, c ?? 0, d ?? 0]);
    }
  }
  return parsed.range() === 'unicast';
}

/** Thrown (as the request's error) when a webhook would connect to a non-public address. */
export class PrivateAddressError extends Error {
  override name = 'PrivateAddressError';
}

/** A `lookup` that resolves with `resolver` and refuses names resolving to any non-public address. */
function publicOnlyLookup(resolver: HostResolver): LookupFunction {
  return (hostname, options, callback) => {
    resolver.addresses(hostname).then(
      (found) => {
        const bad = found.find((a) => !isPublicAddress(a));
        const wanted = found
          .map((address) => ({ address, family: isIPv6(address) ? 6 : 4 }))
          .filter((a) => !options.family || a.family === options.family);
        if (bad || wanted.length === 0) {
          return callback(
            new PrivateAddressError(`${hostname} resolves to ${bad ?? 'nothing'}, not a public address`),
            '',
            0,
          );
        }
        if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, wanted);
        const first = wanted[0] as LookupAddress;
        callback(null, first.address, first.family);
      },
      (error: Error) => callback(error, '', 0),
    );
  };
}

// The public pool's sockets get their `lookup` per request (an agent's own would win over it), from the
// name servers configured.
const agents = {
  public: { http: new HttpAgent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) },
  any: { http: new HttpAgent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) },
};

/** What one attempt came to. */
export interface SendResult {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  excerpt: string | null;
}

/** POSTs `body` to `url`; never throws. */
export function sendWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: { timeoutMs: number; allowPrivate: boolean; dnsServers?: readonly string[] },
): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (result: Omit<SendResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, durationMs: elapsed() });
    };
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return finish({ statusCode: null, error: 'invalid URL', excerpt: null });
    }
    const secure = target.protocol === 'https:';
    const host = target.hostname.replace(/^\[|\]$/g, '');
    // Node does not call `lookup` for an address literal, so a literal is checked here.
    if (!options.allowPrivate && ipaddr.isValid(host) && !isPublicAddress(host)) {
      return finish({ statusCode: null, error: `${host} is not a public address`, excerpt: null });
    }
    const pool = options.allowPrivate ? agents.any : agents.public;
    const request = (secure ? https.request : httpRequest)(target, {
      method: 'POST',
      agent: secure ? pool.https : pool.http,
      ...(options.allowPrivate ? {} : { lookup: publicOnlyLookup(hostResolver(options.dnsServers)) }),
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'cqs-webhooks/1',
        ...headers,
      },
    });
    timer = setTimeout(() => {
      request.destroy(new Error(`no answer within ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    request.on('error', (error) => finish({ statusCode: null, error: error.message, excerpt: null }));
    request.on('response', (response) => {
      let excerpt = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        if (excerpt.length < RESPONSE_EXCERPT_LENGTH) excerpt += chunk;
        if (excerpt.length >= RESPONSE_EXCERPT_LENGTH) {
          // Nothing more is kept, so nothing more is read.
          response.destroy();
          done();
        }
      });
      const done = () => {
        const code = response.statusCode ?? 0;
        const ok = code >= 200 && code < 300;
        finish({
          statusCode: code,
          error: ok ? null : code >= 300 && code < 400 ? 'redirects are not followed' : `answered ${code}`,
          excerpt: excerpt.slice(0, RESPONSE_EXCERPT_LENGTH) || null,
        });
      };
      response.on('end', done);
      response.on('error', done);
    });
    request.end(body);
  });
}
