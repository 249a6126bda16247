/**
 * Looks up the addresses of a webhook's host name with c-ares (`dns.Resolver`), not `dns.lookup`.
 * `dns.lookup` is getaddrinfo on libuv's thread pool, four threads that file reads and writes share (the
 * embedded storage's uploads and downloads): a company whose webhook host's name servers answer slowly or
 * never held a thread for each lookup for as long as the system resolver tried (10 s and more), so a few
 * endpoints on such a name, at WEBHOOK_CONCURRENCY 32, stalled every company's uploads. c-ares runs on the
 * event loop, with its own time limit per query.
 *
 * It does not read /etc/hosts: `localhost` and names under it are loopback by RFC 6761 here, and any other
 * name is asked of DNS. Only the public-address rule uses it; WEBHOOK_ALLOW_PRIVATE (names of a private
 * network, often in /etc/hosts) keeps the system's lookup.
 */
import { Resolver } from 'node:dns/promises';

/** Milliseconds c-ares waits for a first answer before it asks again (doubled on each try). */
const QUERY_TIMEOUT_MS = 1000;
/** Tries per name server. */
const TRIES = 2;

/** Thrown when a name has no address, or its name servers did not answer in time. */
export class HostLookupError extends Error {
  override name = 'HostLookupError';
}

/** Resolves host names to all their IPv4 and IPv6 addresses. */
export interface HostResolver {
  addresses(host: string): Promise<string[]>;
}

const resolvers = new Map<string, HostResolver>();

/**
 * The resolver for `servers` (`ip` or `ip:port`; the system's name servers when none are given), made once
 * per list: a c-ares channel holds sockets.
 */
export function hostResolver(servers: readonly string[] = []): HostResolver {
  const key = servers.join(',');
  let resolver = resolvers.get(key);
  if (!resolver) {
    resolver = makeResolver(servers);
    resolvers.set(key, resolver);
  }
  return resolver;
}

function makeResolver(servers: readonly string[]): HostResolver {
  const dns = new Resolver({ timeout: QUERY_TIMEOUT_MS, tries: TRIES });
  if (servers.length > 0) dns.setServers([...servers]);
  return {
    async addresses(host) {
      const name = host.toLowerCase().replace(/\.$/, '');
      if (name === 'localhost' || name.endsWith('.localhost')) return ['127.0.0.1', '::1'];
      const [v4, v6] = await Promise.allSettled([dns.resolve4(name), dns.resolve6(name)]);
      const found = [v4, v6].flatMap((r) => (r.status === 'fulfilled' ? r.value : []));
      if (found.length > 0) return found;
      const codes = [v4, v6].map((r) =>
        r.status === 'rejected' ? (r.reason as { code?: string }).code : '',
      );
      throw new HostLookupError(
        codes.includes('ETIMEOUT')
          ? `the name servers of ${host} did not answer in time`
          : `${host} does not resolve`,
      );
    },
  };
}
