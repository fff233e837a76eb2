// Message streams (docs/sending.md, "Streams"): `transactional` and
// `broadcast` are built in; a project may define more, each following the
// rules of one of those two kinds.
import { z } from '@hono/zod-openapi';
import { Timestamp } from './common.js';
import { BUILT_IN_STREAMS, StreamName, STREAM_KINDS } from './send.js';

export const StreamSchema = z.object({
  id: z.uuid().nullable().openapi({ description: 'null for the built-in streams' }),
  name: z.string().openapi({ example: 'newsletter' }),
  kind: z.enum(STREAM_KINDS).openapi({ description: 'Whose rules it follows: `broadcast` mail carries one-click unsubscribe and needs DMARC on the from-domain; `transactional` does neither unless a send asks for `list_unsubscribe`' }),
  description: z.string(),
  built_in: z.boolean(),
  created_at: Timestamp.nullable().openapi({ description: 'null for the built-in streams' }),
}).openapi('Stream');

export const CreateStreamSchema = z.object({
  name: StreamName.refine((n) => !(BUILT_IN_STREAMS as readonly string[]).includes(n), 'is a built-in stream; choose another name')
    .openapi({ description: 'Lower-case letters, digits, `-` and `_`, 1 to 32 characters; unique in the project; not `transactional` or `broadcast`', example: 'newsletter' }),
  kind: z.enum(STREAM_KINDS, { error: `must be one of ${STREAM_KINDS.join(', ')}` }),
  description: z.string().trim().max(200, 'must be at most 200 characters').optional(),
}).strict().openapi('CreateStream');

export const StreamNameParams = z.object({
  name: StreamName.openapi({ param: { name: 'name', in: 'path' } }),
});

export type StreamRecord = z.infer<typeof StreamSchema>;
export type CreateStreamInput = z.infer<typeof CreateStreamSchema>;
