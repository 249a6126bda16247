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
/** Body of POST /api/v1/call/start and /stop. */
export type CallStateRequest = RequestOf<Post<'/api/v1/call/start'>>;
/** A call-handoff record (spec 2.6). */
export type CallHandoff = OkOf<Get<'/api/v1/call-handoff/{handoff_id}'>>;
/** A product (spec 2.7). */
export type Product = OkOf<Get<'/api/v1/product/list'>>['products'][number];
/** An upload's status (GET /api/v1/upload/{upload_id}). */
export type UploadStatus = OkOf<Get<'/api/v1/upload/{upload_id}'>>;
/** The success body (spec 2.9). */
export type Success = { success: boolean };
