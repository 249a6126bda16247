/**
 * Domain errors: what went wrong in the service's own terms. Only the HTTP edge
 * (`http/error-handler.ts`) turns them into status codes.
 */

/** The base of every error the domain throws on purpose. */
export abstract class DomainError extends Error {
  abstract readonly kind: DomainErrorKind;
}

/** What the HTTP edge maps to a status code. */
export type DomainErrorKind =
  | 'bad_request'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'agent_conflict'
  | 'invalid'
  | 'gone'
  | 'unavailable';

/** The request as a whole cannot be understood (not JSON, a key sent twice). */
export class BadRequestError extends DomainError {
  readonly kind = 'bad_request';
}

/** No valid credentials: missing, malformed, unknown or revoked key, or an inactive user. */
export class UnauthenticatedError extends DomainError {
  readonly kind = 'unauthenticated';
}

/** Valid credentials that lack what the action needs (a scope). */
export class ForbiddenError extends DomainError {
  readonly kind = 'forbidden';
}

/** The thing does not exist for this caller; another company's things do not exist either. */
export class NotFoundError extends DomainError {
  readonly kind = 'not_found';
}

/** The thing is in a state that forbids the action (a stopped call started again, a final record written). */
export class ConflictError extends DomainError {
  readonly kind = 'conflict';
}

/** More than one active user of the company holds the agent email. */
export class AgentConflictError extends DomainError {
  readonly kind = 'agent_conflict';
  readonly agentEmail: string;
  readonly conflictingUserIds: string[];
  constructor(agentEmail: string, conflictingUserIds: string[]) {
    super(`more than one active user has agent_email ${JSON.stringify(agentEmail)}`);
    this.agentEmail = agentEmail;
    this.conflictingUserIds = conflictingUserIds;
  }
}

/** A value breaks a rule of the contract; `field` names where, as a dotted path. */
export class ValidationError extends DomainError {
  readonly kind = 'invalid';
  readonly field: string | undefined;
  constructor(message: string, field?: string) {
    super(field ? `${field}: ${message}` : message);
    this.field = field;
  }
}

/** The refusal of a cursor the service did not make (a list's, the event feed's), naming its parameter. */
export function foreignCursorError(field: string): ValidationError {
  return new ValidationError('is not a cursor this service made', field);
}

/** What was asked for existed once and is gone for good (an event cursor past retention). */
export class GoneError extends DomainError {
  readonly kind = 'gone';
}

/** A dependency (database, storage) cannot be reached right now; the caller should retry. */
export class UnavailableError extends DomainError {
  readonly kind = 'unavailable';
}

/**
 * The domain error an error is or was caused by: a library (Drizzle, for one) may wrap what the code under
 * it threw, keeping it as `cause`.
 */
export function findDomainError(error: unknown): DomainError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof DomainError) return current;
    current = current.cause;
  }
  return undefined;
}
