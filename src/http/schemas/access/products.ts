/** The schemas of the product endpoints. */
import { Type } from 'typebox';

/** A product as the list shows it. */
const Product = Type.Object(
  {
    id: Type.Integer({ description: 'Also the product_id of call/create.' }),
    name: Type.String(),
    status: Type.Union([Type.Literal('active'), Type.Literal('archived')]),
  },
  { $id: 'Product' },
);

/** The answer of GET /api/v1/product/list. */
export const ProductListResponse = Type.Object(
  { products: Type.Array(Product) },
  { examples: [{ products: [{ id: 1, name: 'Sales QA', status: 'active' }] }] },
);
