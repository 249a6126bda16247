/** The product list and the product check of call creation (decisions 11 and 15). */
import type { Db } from '../../adapters/db/database.ts';
import { findVisibleProduct, listVisibleProducts } from '../../adapters/db/repositories/products.ts';
import { type DomainError, NotFoundError, ValidationError } from '../errors.ts';
import type { Principal } from './principal.ts';
import type { PrincipalCache } from './principal-cache.ts';

/** A product as the API shows it. */
export interface ProductView {
  id: number;
  name: string;
  status: 'active' | 'archived';
}

/** The products the caller may see, active and archived; with `cache`, from memory when it can. */
export async function listProductsFor(
  db: Db,
  principal: Principal,
  cache?: PrincipalCache,
): Promise<ProductView[]> {
  const load = async () => {
    const rows = await listVisibleProducts(db, principal);
    return rows.map((p): ProductView => ({ id: p.id, name: p.name, status: p.status }));
  };
  return cache ? cache.products(principal, load) : load();
}

/**
 * The product rule of call requests: a call may be filed under a product visible to the caller (else 404)
 * and active (else 422). `status` is the visible product's, undefined when the caller cannot see it. The
 * call writes of `adapters/db/repositories/call-writes.ts` look the product up in the same statement.
 */
export function unusableProductError(productId: number, status: string | undefined): DomainError | undefined {
  if (status === undefined) return new NotFoundError(`product ${productId} not found`);
  if (status !== 'active') return new ValidationError(`product ${productId} is ${status}`, 'product_id');
  return undefined;
}

/** The product a call may be filed under (see unusableProductError). */
export async function requireUsableProduct(
  db: Db,
  principal: Principal,
  productId: number,
): Promise<ProductView> {
  const product = await findVisibleProduct(db, principal, productId);
  const error = unusableProductError(productId, product?.status);
  if (error || !product) throw error;
  return { id: product.id, name: product.name, status: product.status };
}
