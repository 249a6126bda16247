/** Names for the request and response bodies of the generated OpenAPI types. */
import type { paths } from './generated/openapi.ts';

type JsonBody<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type Post<P extends keyof paths> = paths[P] extends { post: infer O } ? O : never;
type Get<P extends keyof paths> = paths[P] extends { get: infer O } ? O : never;
type RequestOf<O> = O extends { requestBody: infer R } ? JsonBody<R> : never;
type OkOf<O> = O extends { responses: { 200: infer R } } ? JsonBody<R> : never;

/** Body of POST /api/v1/call/create. */
export type CreateCallRequest = RequestOf<Post<'/api/v1/call/create'>>;
/** Answer of POST /api/v1/call/create: the upload body with a filename, else success. */
export type CreateCallResponse = OkOf<Post<'/api/v1/call/create'>>;
/** Answer of create with a filename (spec 2.5). */
export type UploadUrlResponse = Extract<CreateCallResponse, { upload_url: string }>;
/** Body of POST /api/v1/call/add_tags. */
export type AddTagsRequest = RequestOf<Post<'/api/v1/call/add_tags'>>;
/** A tag (spec 2.3). */
export type Tag = AddTagsRequest['tags'][number];
/** Body of POST /api/v1/call/start. */
export type CallStateRequest = RequestOf<Post<'/api/v1/call/start'>>;
/** Body of POST /api/v1/call/stop: start's without `product_id`, which stop refuses (422). */
export type StopCallRequest = RequestOf<Post<'/api/v1/call/stop'>>;
/** A call-handoff record (spec 2.6). */
export type CallHandoff = OkOf<Get<'/api/v1/call-handoff/{handoff_id}'>>;
/** A product (spec 2.7). */
export type Product = OkOf<Get<'/api/v1/product/list'>>['products'][number];
/** An upload's status (GET /api/v1/upload/{upload_id}). */
export type UploadStatus = OkOf<Get<'/api/v1/upload/{upload_id}'>>;
/** The success body (spec 2.9). */
export type Success = { success: boolean };

/** A page of the event feed (GET /api/v1/events). */
export type EventsPage = OkOf<Get<'/api/v1/events'>>;
/** One event: `{id, type, created_at, data}`; the body of every webhook delivery too. */
export type CqsEvent = EventsPage['events'][number];

/** Body of POST /api/v1/webhooks. */
export type CreateWebhookRequest = RequestOf<Post<'/api/v1/webhooks'>>;
/** A webhook endpoint with its secret, as create answers it. */
export type CreatedWebhook =
  Post<'/api/v1/webhooks'> extends { responses: { 201: infer R } } ? JsonBody<R> : never;
/** A webhook endpoint. */
export type WebhookEndpoint = OkOf<Get<'/api/v1/webhooks'>>['webhooks'][number];
/** One delivery of the log of an endpoint. */
export type WebhookDelivery = OkOf<Get<'/api/v1/webhooks/{id}/deliveries'>>['deliveries'][number];
type QueryOf<O> = O extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
/** The filters of GET /api/v1/calls (every one optional, combined with AND); `tag` may be repeated. */
export type ListCallsFilters = Omit<QueryOf<Get<'/api/v1/calls'>>, 'cursor' | 'limit' | 'tag'> & {
  /** `KEY` (the call has the tag) or `KEY:VALUE` (its value written as text); several: all must match. */
  tag?: string | string[];
};
/** One page of GET /api/v1/calls. */
export type CallPage = OkOf<Get<'/api/v1/calls'>>;
/** A call as the list shows it. */
export type CallItem = CallPage['calls'][number];
/** One call with everything stored about it (GET /api/v1/calls/{id}). */
export type CallDetail = OkOf<Get<'/api/v1/calls/{id}'>>;
/** A signed URL of a call's recording (GET /api/v1/calls/{id}/recording?redirect=false). */
export type RecordingLink = OkOf<Get<'/api/v1/calls/{id}/recording'>>;
