/**
 * The errors of the checks the call writes make in their own statement (agent, product): the same errors,
 * with the same messages, as `resolveAgent` and `requireUsableProduct` throw.
 */
import type { CallCheckFailure } from '../../adapters/db/repositories/call-writes.ts';
import { unusableProductError } from '../access/products.ts';
import type { DomainError } from '../errors.ts';
import { agentLookupError } from './agents.ts';

/** The domain error of a failed check of a call write. */
export function callCheckError(
  failure: CallCheckFailure,
  agentEmail: string,
  productId?: number,
): DomainError {
  switch (failure.outcome) {
    case 'agent-missing':
      return agentLookupError(agentEmail, []);
    case 'agent-ambiguous':
      return agentLookupError(agentEmail, failure.agentIds);
    case 'product-missing':
    case 'product-inactive': {
      const status = failure.outcome === 'product-inactive' ? failure.productStatus : undefined;
      const error = productId === undefined ? undefined : unusableProductError(productId, status);
      if (!error) throw new Error(`call write refused product ${productId} with status ${status}`);
      return error;
    }
  }
}
