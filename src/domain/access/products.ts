/** The product list and the product check of call creation (decisions 11 and 15). */
import type { Db } from '../../adapters/db/database.ts';
import { findVisibleProduct, listVisibleProducts } from '../../adapters/db/repositories/products.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import type { Principal } from './principal.ts';

/** A product as the API shows it. */
export interface ProductView {
  id: number;
  name: string;
  status: 'active' | 'archived';
}

/** The products the caller may see, active and archived. */
export async function listProductsFor(db: Db, principal: Principal): Promise<ProductView[]> {
  const rows = await listVisibleProducts(db, principal);
  return rows.map((p) => ({ id: p.id, name: p.name, status: p.status }));
}

/** The product a call may be filed under: visible to the caller (else 404) and active (else 422). */
export async function requireUsableProduct(
  db: Db,
  principal: Principal,
  productId: number,
): Promise<ProductView> {
  const product = await findVisibleProduct(db, principal, productId);
  if (!product) throw new NotFoundError(`product ${productId} not found`);
  if (product.status !== 'active') {
    throw new ValidationError(`product ${productId} is ${product.status}`, 'product_id');
  }
  return { id: product.id, name: product.name, status: product.status };
}
