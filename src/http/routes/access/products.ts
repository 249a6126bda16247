/** GET /api/v1/product/list (spec 4.6, decision 15). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { listProductsFor } from '../../../domain/access/products.ts';
import type { Services } from '../../../services.ts';
import { ProductListResponse } from '../../schemas/access/products.ts';
import { sendSerializedOnce } from '../../serialized-once.ts';

/** The product routes. */
export const productRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get(
    '/api/v1/product/list',
    {
      config: { scope: 'calls' },
      schema: {
        tags: ['products'],
        operationId: 'listProducts',
        summary: 'List the products the caller may see',
        description:
          'An admin sees every product of the company; another user sees the products granted to them. ' +
          'Active and archived products are both listed.',
        response: {
          200: ProductListResponse,
        },
      },
    },
    async (request, reply) => {
      const products = await listProductsFor(
        services.database.db,
        request.principal,
        services.principalCache,
      );
      return sendSerializedOnce(reply, products, { products });
    },
  );
};
