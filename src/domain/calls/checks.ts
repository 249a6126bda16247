/**
 * The errors of the checks the call writes make in their own statement (agent, product, the pair's call):
 * the same errors, with the same messages, as `resolveAgent` and `requireUsableProduct` throw.
 */
import type { CallCheckFailure } from '../../adapters/db/repositories/call-writes.ts';
import { unusableProductError } from '../access/products.ts';
import { ConflictError, type DomainError } from '../errors.ts';
import { agentLookupError } from './agents.ts';
import { conversationNotFoundError } from './conversations.ts';

/** What the request named. */
export interface CallRequestNames {
  agentEmail: string;
  conversationId: string;
  productId?: number | undefined;
}

/** The domain error of a failed check of a call write. */
export function callCheckError(failure: CallCheckFailure, names: CallRequestNames): DomainError {
  switch (failure.outcome) {
    case 'agent-missing':
      return agentLookupError(names.agentEmail, []);
    case 'agent-ambiguous':
      return agentLookupError(names.agentEmail, failure.agentIds);
    case 'conversation-missing':
      return conversationNotFoundError(names.conversationId, names.agentEmail);
    case 'call-stopped':
      return new ConflictError(
        `conversation ${JSON.stringify(names.conversationId)} is stopped; a stopped call cannot start again`,
      );
    case 'product-missing':
    case 'product-inactive': {
      const status = failure.outcome === 'product-inactive' ? failure.productStatus : undefined;
      const error = names.productId === undefined ? undefined : unusableProductError(names.productId, status);
      if (!error) throw new Error(`call write refused product ${names.productId} with status ${status}`);
      return error;
    }
  }
}
