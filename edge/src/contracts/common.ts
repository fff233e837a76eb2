// Field schemas shared by several routes.
import { z } from '@hono/zod-openapi';
import { isIpOrCidr, isUuid } from '@edgemail/shared';

/** An id in a path, query or body: the same check as the project header's. */
export const Uuid = z.string().refine(isUuid, { message: 'must be a UUID' }).openapi({ format: 'uuid' });

export const IdParams = z.object({
  id: Uuid.openapi({ param: { name: 'id', in: 'path' }, example: '0b9b7c1e-4a8a-4c55-9d9f-1c3f1e0d2a11' }),
});

export const AllowedIps = z
  .array(z.string().refine(isIpOrCidr, { message: 'must be an IP address or CIDR range' }))
  .max(100)
  .openapi({ example: ['203.0.113.0/24', '2001:db8::/32'] });

/** RFC 3339 with an explicit offset, in the future. */
export const FutureTimestamp = z
  .iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp' })
  .refine((s) => Date.parse(s) > Date.now(), { message: 'must be in the future' })
  .openapi({ example: '2027-01-01T00:00:00Z' });

const TIMESTAMP = { format: 'date-time', example: '2026-11-25T12:00:00.000Z' };

export const Timestamp = z.string().openapi(TIMESTAMP);

/** A shared relay-protocol field (RFC 3339 text), documented as `Timestamp` is. */
export const asTimestamp = <S extends z.ZodType>(schema: S, description?: string) =>
  schema.meta(description === undefined ? TIMESTAMP : { ...TIMESTAMP, description });

/**
 * A shared relay-protocol array with `element` (its element, annotated) in
 * place of its element: the shared array's bounds and their messages are kept.
 */
export const arrayOf = <E extends z.ZodType>(shared: z.ZodArray<z.ZodType>, element: E) =>
  z.array(element).check(...(shared.def.checks ?? []) as z.core.$ZodCheck<z.output<E>[]>[]);

export const iso = (d: Date | null) => (d ? d.toISOString() : null);

/**
 * An integer query parameter with bounds and a default; anything else is 400
 * naming the parameter (`limit: must be an integer from 1 to 200`).
 */
export const integerQuery = (name: string, min: number, max: number, fallback: number) =>
  z.string()
    .regex(/^\d+$/, `must be an integer from ${min} to ${max}`)
    .transform(Number)
    .refine((n) => n >= min && n <= max, `must be an integer from ${min} to ${max}`)
    .optional()
    .transform((n) => n ?? fallback)
    .openapi({ param: { name, in: 'query' }, type: 'integer', minimum: min, maximum: max, default: fallback });

/** `{idx}` of an attachment download: zero-based, in the order of the record's `attachments`. */
export const AttachmentIndex = z.string()
  .regex(/^\d+$/, 'must be a non-negative integer')
  .transform(Number)
  .openapi({ param: { name: 'idx', in: 'path' }, type: 'integer', minimum: 0 });

/** The 200 of an attachment download (`attachmentResponse` in http/download.ts builds it). */
export const AttachmentDownload = {
  description: 'The attachment\'s bytes',
  content: { 'application/octet-stream': { schema: z.string().openapi({ format: 'binary', description: 'Served with the attachment\'s own Content-Type' }) } },
};
