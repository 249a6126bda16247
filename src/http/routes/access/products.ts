/** GET /api/v1/product/list (spec 4.6, decision 15). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import type { Principal } from '../../../domain/access/principal.ts';
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
    (request, reply) => {
      // Answered from memory without a promise when it can be: most lists are.
      const known = services.principalCache.peekProducts(request.principal);
      if (!known) return listAndSend(request.principal, reply);
      sendSerializedOnce(reply, known, { products: known });
    },
  );

  /** Lists the products (from the database, or memory) and sends them. */
  async function listAndSend(principal: Principal, reply: FastifyReply): Promise<void> {
    const products = await listProductsFor(services.database.db, principal, services.principalCache);
    sendSerializedOnce(reply, products, { products });
  }
};
