/** Managing webhook endpoints (decision 27): create, list, show, change, delete, rotate the secret. */
import ipaddr from 'ipaddr.js';
import type { Db } from '../../adapters/db/database.ts';
import { failPendingDeliveries } from '../../adapters/db/repositories/webhook-deliveries.ts';
import {
  countEndpointsLocked,
  deleteEndpoint,
  findEndpoint,
  insertEndpoint,
  listEndpoints,
  rotateEndpointSecret,
  updateEndpoint,
  type WebhookEndpoint,
} from '../../adapters/db/repositories/webhooks.ts';
import { HostLookupError, hostResolver } from '../../adapters/http/host-resolver.ts';
import { isPublicAddress } from '../../adapters/http/webhook-sender.ts';
import type { Principal } from '../access/principal.ts';
import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import { requireCompanyWide } from '../events/feed.ts';
import type { EventType } from '../events/types.ts';
import { newWebhookSecret } from './signing.ts';

/** Seconds the old secret keeps signing after a rotation. */
export const ROTATION_OVERLAP_SECONDS = 24 * 3600;

/** An endpoint as the API shows it (the secret is added only on create). */
export interface EndpointView {
  id: string;
  url: string;
  types: EventType[] | null;
  description: string | null;
  enabled: boolean;
  created_at: string;
}

/** Turns a row into the API's endpoint. */
export function toEndpointView(row: WebhookEndpoint): EndpointView {
  return {
    id: row.id,
    url: row.url,
    types: row.types as EventType[] | null,
    description: row.description,
    enabled: row.enabled,
    created_at: row.createdAt.toISOString(),
  };
}

/** How URLs are checked: decision 27's rule, lifted by WEBHOOK_ALLOW_PRIVATE, and the name servers asked. */
export interface UrlRule {
  allowPrivate: boolean;
  /** WEBHOOK_DNS_SERVERS; the system's name servers when empty or absent. */
  dnsServers?: readonly string[];
}

/**
 * Checks a URL by decision 27's rule: http(s) only; unless private addresses are allowed, `https` and a
 * host that resolves only to public addresses (checked again when connecting).
 */
export async function checkWebhookUrl(
  url: string,
  allowPrivate: boolean,
  dnsServers: readonly string[] = [],
): Promise<void> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ValidationError('is not a URL', 'url');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new ValidationError('must be an https URL', 'url');
  }
  if (parsed.username || parsed.password) throw new ValidationError('must not carry credentials', 'url');
  if (allowPrivate) return;
  // The hint is for a developer pointing a local service at a receiver on their machine.
  if (parsed.protocol !== 'https:') throw new ValidationError(`must be an https URL${PRIVATE_HINT}`, 'url');
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (ipaddr.isValid(host)) {
    addresses = [host];
  } else {
    try {
      addresses = await hostResolver(dnsServers).addresses(host);
    } catch (error) {
      throw new ValidationError(
        error instanceof HostLookupError ? error.message : `${host} does not resolve`,
        'url',
      );
    }
  }
  const bad = addresses.find((a) => !isPublicAddress(a));
  if (bad) {
    throw new ValidationError(
      `${host} resolves to ${bad}, which is not a public address${PRIVATE_HINT}`,
      'url',
    );
  }
}

const PRIVATE_HINT =
  ' (http and private addresses are taken only when the service runs with WEBHOOK_ALLOW_PRIVATE=true)';

function notFound(id: string): NotFoundError {
  return new NotFoundError(`webhook endpoint ${id} not found`);
}

/** What create and PATCH accept. */
export interface EndpointInput {
  url?: string;
  types?: string[] | null;
  description?: string | null;
  enabled?: boolean;
}

/** Creates an endpoint with a new secret; a company at `maxEndpoints` gets a ConflictError. */
export async function createEndpoint(
  db: Db,
  principal: Principal,
  input: EndpointInput & { url: string },
  { allowPrivate, dnsServers, maxEndpoints }: UrlRule & { maxEndpoints: number },
): Promise<EndpointView & { secret: string }> {
  requireCompanyWide(principal);
  await checkWebhookUrl(input.url, allowPrivate, dnsServers);
  const row = await db.transaction(async (tx) => {
    const count = await countEndpointsLocked(tx, principal.companyId);
    if (count >= maxEndpoints) {
      throw new ConflictError(
        `the company has ${count} webhook endpoints, the most allowed (WEBHOOK_ENDPOINTS_MAX); delete one first`,
      );
    }
    return insertEndpoint(tx, principal.companyId, {
      url: input.url,
      types: input.types ?? null,
      description: input.description ?? null,
      secret: newWebhookSecret(),
    });
  });
  return { ...toEndpointView(row), secret: row.secret };
}

/** The company's endpoints. */
export async function listEndpointViews(db: Db, principal: Principal): Promise<EndpointView[]> {
  requireCompanyWide(principal);
  return (await listEndpoints(db, principal.companyId)).map((r) => toEndpointView(r));
}

/** One endpoint, or NotFoundError. */
export async function requireEndpoint(db: Db, principal: Principal, id: string): Promise<WebhookEndpoint> {
  requireCompanyWide(principal);
  const row = await findEndpoint(db, principal.companyId, id);
  if (!row) throw notFound(id);
  return row;
}

/** Changes an endpoint; disabling it drops what was pending for it (decision 27). */
export async function patchEndpoint(
  db: Db,
  principal: Principal,
  id: string,
  input: EndpointInput,
  { allowPrivate, dnsServers }: UrlRule,
): Promise<EndpointView> {
  requireCompanyWide(principal);
  if (input.url !== undefined) await checkWebhookUrl(input.url, allowPrivate, dnsServers);
  return db.transaction(async (tx) => {
    const row = await updateEndpoint(tx, principal.companyId, id, {
      ...(input.url !== undefined ? { url: input.url } : {}),
      ...(input.types !== undefined ? { types: input.types } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
      ...(input.enabled === true ? { failingSince: null } : {}),
    });
    if (!row) throw notFound(id);
    if (input.enabled === false) await failPendingDeliveries(tx, principal.companyId, id);
    return toEndpointView(row);
  });
}

/** Deletes an endpoint and its delivery log. */
export async function removeEndpoint(db: Db, principal: Principal, id: string): Promise<void> {
  requireCompanyWide(principal);
  if (!(await deleteEndpoint(db, principal.companyId, id))) throw notFound(id);
}

/** A new secret; the old one keeps signing for 24 hours. */
export async function rotateSecret(db: Db, principal: Principal, id: string): Promise<{ secret: string }> {
  requireCompanyWide(principal);
  const row = await rotateEndpointSecret(
    db,
    principal.companyId,
    id,
    newWebhookSecret(),
    ROTATION_OVERLAP_SECONDS,
  );
  if (!row) throw notFound(id);
  return { secret: row.secret };
}
