/** POST /api/v1/call/create and /call/add_tags (spec 4.1–4.2). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createCall } from '../../../domain/calls/create.ts';
import { addTags } from '../../../domain/calls/tags.ts';
import type { Services } from '../../../services.ts';
import { CreateCallBody, CreateCallResponse, createCallDescription } from '../../schemas/calls/create.ts';
import { Success } from '../../schemas/calls/shared.ts';
import { ADD_TAGS_DESCRIPTION, AddTagsBody, TAG_ERROR_EXAMPLES } from '../../schemas/calls/tags.ts';
import { errorResponses } from '../../schemas/common.ts';
import {
  AGENT_NOT_FOUND,
  agentConflict,
  CONVERSATION_NOT_FOUND,
  errorWithExamples,
  UNKNOWN_FIELD,
} from '../../schemas/examples.ts';

/** The call/create and call/add_tags routes. */
export const callRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { database, storage, config, queue } = services;

  app.post(
    '/api/v1/call/create',
    {
      config: { scope: 'calls' },
      schema: {
        tags: ['calls'],
        operationId: 'createCall',
        summary: 'Create a call (transcript, or media upload)',
        description: createCallDescription(),
        body: CreateCallBody,
        response: {
          200: CreateCallResponse,
          ...errorResponses(413, 415),
          404: errorWithExamples('No such agent or product (another company’s are not found either).', {
            agent_not_found: AGENT_NOT_FOUND,
            product_not_found: ['The caller may not see product_id', 'product 999 not found'],
          }),
          409: agentConflict(),
          422: errorWithExamples('A field is invalid; the message names it. Nothing was recorded.', {
            unknown_field: UNKNOWN_FIELD,
            unsupported_container: [
              'An unsupported video container',
              'filename: .mkv is not a supported video container; supported: .3gp, .3gpp, .flv, .mov, .mp4, .mpeg, .mpg, .webm, .wmv',
            ],
            no_extension_video: [
              'A video type for a file name without extension',
              'content_type: video/mp4 needs a filename ending in .mp4; the filename has no extension',
            ],
            type_mismatch: [
              'Extension and content_type disagree',
              'content_type: audio/mpeg does not match the extension .wav; send audio/wav or audio/x-wav or audio/wave or audio/vnd.wave',
            ],
            video_without_type: [
              'A video-only extension without content_type',
              'content_type: is required for video: send video/quicktime for a .mov file',
            ],
            unsupported_video_type: [
              'A video type outside the table',
              'content_type: video/x-matroska is not a supported video type; use one of video/3gpp, video/x-flv, video/quicktime, video/mp4, video/mpeg, video/webm, video/x-ms-wmv',
            ],
            octet_stream_known_extension: [
              'application/octet-stream for a known extension',
              'content_type: application/octet-stream does not match the extension .wav; send audio/wav, or omit content_type',
            ],
            content_type_without_filename: [
              'content_type without filename',
              'content_type: is sent without filename',
            ],
            unsafe_filename: [
              'A path instead of a base name',
              'filename: must be a base name, without / or \\',
            ],
            start_time_milliseconds: [
              'start_time in milliseconds by mistake',
              'start_time: 1767225600000 is above 100000000000, so it looks like milliseconds; send seconds since the Unix epoch',
            ],
            channels_conflict: [
              'Deprecated channels contradicting speaker',
              'channels: means separation "channels", but speaker.separation is "diarize"',
            ],
            channel_map_order: [
              'channel_map with one role twice',
              'speaker.channel_map: must be ["agent", "customer"] or ["customer", "agent"]',
            ],
            segment_order: [
              'A segment that stops before it starts',
              'transcript[1].stop: must not be less than start',
            ],
            tag_type: [
              'A tag type outside string, integer, boolean',
              'tags[0].type: must be one of "string", "integer", "boolean"',
            ],
            tag_value: [
              'A tag value that disagrees with its type',
              'tags[0].value: must be an integer, as type is "integer"',
            ],
            duplicate_tag: ['The same tag key twice', 'tags[1].key: "csat" is sent more than once'],
            archived_product: ['An archived product', 'product_id: product 7 is archived'],
          }),
        },
      },
    },
    async (request) =>
      createCall(
        { db: database.db, storage, uploadUrlExpiresIn: config.uploadUrlExpiresIn, queue },
        request.principal,
        request.body,
      ),
  );

  app.post(
    '/api/v1/call/add_tags',
    {
      config: { scope: 'calls' },
      schema: {
        tags: ['calls'],
        operationId: 'addCallTags',
        summary: 'Add typed tags to a call',
        description: ADD_TAGS_DESCRIPTION,
        body: AddTagsBody,
        response: {
          200: Success,
          ...errorResponses(413, 415),
          404: errorWithExamples('No such agent, or the agent has no such call.', {
            agent_not_found: AGENT_NOT_FOUND,
            conversation_not_found: CONVERSATION_NOT_FOUND,
          }),
          409: agentConflict(),
          422: errorWithExamples(
            'A field is invalid; the message names it. Nothing was recorded.',
            TAG_ERROR_EXAMPLES,
          ),
        },
      },
    },
    async (request) => {
      await addTags(database.db, request.principal, request.body);
      return { success: true };
    },
  );
};
