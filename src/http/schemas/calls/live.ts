/** The schemas of the deprecated live endpoints (spec 4.7–4.8, decision 13). */
import { Type } from 'typebox';
import { DEPRECATION_HEADER } from '../../deprecation.ts';
import { namedExamples } from '../examples.ts';
import { Success } from './shared.ts';

/** The path of both live endpoints. */
export const LiveParams = Type.Object(
  {
    conversation_id: Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'The call’s conversation_id.',
    }),
  },
  { additionalProperties: false },
);

/** The body of data/sale. */
export const SaleBody = Type.Object(
  {
    closed: Type.Optional(
      Type.Union([Type.Boolean(), Type.Null()], {
        description: 'true: the sale was closed; false: it was not. Stored as the boolean tag sale_closed.',
      }),
    ),
  },
  {
    additionalProperties: false,
    ...namedExamples({
      closed: { summary: 'The sale was closed', value: { closed: true } },
      not_closed: { summary: 'The sale was not closed', value: { closed: false } },
    }),
  },
);

/** The body of data/customer. */
export const CustomerBody = Type.Object(
  {
    account_id: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 4096 }), Type.Null()], {
        description: 'The customer’s account id. Stored as the string tag customer_account_id.',
      }),
    ),
  },
  {
    additionalProperties: false,
    ...namedExamples({ account: { summary: 'The customer’s account', value: { account_id: 'ACME-00042' } } }),
  },
);

/** Shared text of both live endpoints. */
export const LIVE_DESCRIPTION = [
  '**Deprecated**: use call/add_tags, which names the agent. Answers carry `Deprecation` and',
  '`Link: <…/api/v1/docs>; rel="deprecation"` headers.',
  '',
  'The call is found by conversation_id within the caller’s company: none, 404; calls of several agents with',
  'that conversation_id, 409 (ambiguous). A body with no data (`{}`, or the field null) is a 422',
  '"no data provided" and changes nothing.',
].join('\n');

/** The 200 answer of a live route: the success body, with the deprecation headers every answer carries. */
export const LiveSuccess = Type.Object(Success.properties, {
  additionalProperties: false,
  description: 'Done.',
  examples: [{ success: true }],
  headers: {
    Deprecation: {
      type: 'string',
      description: `RFC 9745: \`${DEPRECATION_HEADER}\` (deprecated since 2026-01-01).`,
    },
    Link: { type: 'string', description: '`<…/api/v1/docs>; rel="deprecation"; type="text/html"`.' },
  },
});
