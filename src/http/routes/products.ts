/** GET /api/v1/product/list (spec 4.6, decision 15). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { listProductsFor } from '../../domain/products.ts';
import type { Services } from '../../services.ts';
import { AUTHENTICATED_ERRORS, errorResponses, SECURITY } from '../schemas/common.ts';

const Product = Type.Object(
  {
    id: Type.Integer({ description: 'Also the product_id of call/create.' }),
    name: Type.String(),
    status: Type.Union([Type.Literal('active'), Type.Literal('archived')]),
  },
  { $id: 'Product' },
);

/** The product routes. */
export const productRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get(
    '/api/v1/product/list',
    {
      config: { scope: 'calls' },
      schema: {
        tags: ['products'],
        summary: 'List the products the caller may see',
        description:
          'An admin sees every product of the company; another user sees the products granted to them. ' +
          'Active and archived products are both listed.',
        security: SECURITY,
        response: {
          200: Type.Object(
            { products: Type.Array(Product) },
            { examples: [{ products: [{ id: 1, name: 'Sales QA', status: 'active' }] }] },
          ),
          ...errorResponses(...AUTHENTICATED_ERRORS),
        },
      },
    },
    async (request) => ({ products: await listProductsFor(services.database.db, request.principal) }),
  );
};
