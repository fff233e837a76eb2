// The body of the send routes: one message (`POST /api/v1/emails/send`) or up
// to 100 (`POST /api/v1/emails/batch`). Everything that reaches a header of
// the composed message is checked for CR and LF here, so no field can add a
// header of its own (header injection); the problem names the field.
import { z } from '@hono/zod-openapi';
import { addressDomain, isBase64, splitAddress } from '@edgemail/shared';
import { formatMailbox, normalizeAddress, parseOneMailbox } from './email-address.js';
import { safeContentType } from './media-type.js';
import { Uuid } from './common.js';
import { RenderLanguage, TemplateData } from './template-render.js';

export const MAX_RECIPIENTS = 50;
export const MAX_BATCH_MESSAGES = 100;
export const MAX_TAGS = 10;
export const MAX_CUSTOM_HEADERS = 50;
export const MAX_ATTACHMENTS = 100;
export const MAX_REPLY_TO = 10;
/** How far ahead `send_at` may be (SendGrid's bound too). */
export const MAX_SCHEDULE_HOURS = 72;

const CR_OR_LF = 'must not contain CR or LF';
const hasCrOrLf = (s: string) => /[\r\n]/.test(s);
// eslint-disable-next-line no-control-regex
const hasControl = (s: string) => /[\x00-\x1f\x7f]/.test(s);

/**
 * Headers a custom header may not name (case-insensitive), and why: those
 * the service writes itself (and anything under `Content-`), and those that
 * only the servers a message passes may write (trace and authentication
 * results), which a receiver would otherwise believe.
 */
export const RESERVED_HEADERS = [
  'from', 'sender', 'to', 'cc', 'bcc', 'subject', 'date', 'message-id', 'reply-to', 'mime-version',
  'dkim-signature', 'received', 'return-path', 'authentication-results', 'received-spf',
] as const;
// Received-SPF asserts an SPF result (RFC 7208 9.1), as Authentication-Results does.
const TRACE_HEADERS = new Set(['received', 'return-path', 'authentication-results', 'received-spf']);

/** Why a custom header name is refused, or null when it may be used. */
function reservedHeaderProblem(name: string): string | null {
  const lower = name.toLowerCase();
  if (TRACE_HEADERS.has(lower) || lower.startsWith('resent-') || lower.startsWith('arc-')) {
    return 'is a trace or authentication header, written only by the servers a message passes, and cannot be a custom header';
  }
  if (lower === 'sender') return 'is reserved: a message has one author, `from`, and cannot name another sender';
  if ((RESERVED_HEADERS as readonly string[]).includes(lower) || lower.startsWith('content-')) return 'is set by the service and cannot be a custom header';
  return null;
}

// RFC 5322 field-name: printable US-ASCII except the colon.
const FIELD_NAME = /^[\x21-\x39\x3b-\x7e]+$/;

/** One mailbox as given (`Ann <ann@example.org>` or bare) and what it comes down to. */
export interface Mailbox {
  /** The display name, unquoted ('' for none). */
  name: string;
  /** The bare address: the local part as given, the domain lower case. Envelope and email log. */
  address: string;
  /** The bare address, lower case: how suppressions and duplicates are compared. */
  key: string;
  /** The header form, composed from `name` and `address` (never the client's text): what the header and the log show. */
  display: string;
}

/**
 * Exactly one mailbox, `Name <local@domain>` or `local@domain`, or the
 * problem with it (a list, a group, CR or LF, a bad address).
 * @example parseMailbox('"Acme, Inc." <News@Example.ORG>') // { name: 'Acme, Inc.', address: 'News@example.org', key: 'news@example.org', display: '"Acme, Inc." <News@example.org>' }
 */
export function parseMailbox(input: string): Mailbox | { problem: string } {
  if (hasCrOrLf(input)) return { problem: CR_OR_LF };
  if (hasControl(input)) return { problem: 'must not contain control characters' };
  const parts = parseOneMailbox(input);
  if ('problem' in parts) return parts;
  const normalized = normalizeAddress(input);
  if ('problem' in normalized) return normalized;
  // The local part as written, the domain as normalized (both addresses have an `@`: normalizeAddress took it).
  const address = `${splitAddress(parts.addrSpec)!.local}@${addressDomain(normalized.address)}`;
  return { name: parts.name, address, key: normalized.address, display: formatMailbox(parts.name, address) };
}

export const MailboxSchema = z.string()
  .max(1000, 'must be at most 1000 characters')
  .transform((input, ctx): Mailbox => {
    const parsed = parseMailbox(input);
    if ('problem' in parsed) {
      ctx.addIssue({ code: 'custom', message: parsed.problem });
      return z.NEVER;
    }
    return parsed;
  })
  .openapi({ type: 'string', example: 'Acme <news@acme.test>', description: 'Exactly one address, bare or as `Name <address>` (a list or group is refused); the header shows the name and address as the service composes them' });

/**
 * An address field (`to`, `cc`, `bcc`, `reply_to`; send-test's `to`): one
 * mailbox as a string or several as an array, as clients written for Resend
 * or Postmark send them; either way the service works on the array. A problem
 * with a single string names the field (`to`), one in an array its entry
 * (`to.1`). A list inside one string (`"a@x, b@x"`) is refused, as in an entry.
 */
export function AddressList(opts: { min?: number; max: number; tooMany: string; description: string; example?: string }) {
  const mailbox = { type: 'string' as const, description: 'Exactly one address, bare or as `Name <address>`', example: opts.example ?? 'Ann <ann@example.org>' };
  // A custom check rather than z.union: its OpenAPI would be anyOf, which .openapi() cannot replace.
  const isForm = (v: unknown): v is string | string[] => typeof v === 'string' || (Array.isArray(v) && v.every((e) => typeof e === 'string'));
  return z.custom<string | string[]>(isForm, { error: (issue) => (issue.input === undefined ? 'is required' : 'must be an address or an array of addresses') })
    .transform((given, ctx): Mailbox[] => {
      const single = !Array.isArray(given);
      const list = single ? [given] : given;
      if (opts.min && list.length < opts.min) ctx.addIssue({ code: 'custom', message: opts.min === 1 ? 'must have at least one recipient' : `must have at least ${opts.min} addresses` });
      if (list.length > opts.max) ctx.addIssue({ code: 'custom', message: opts.tooMany });
      return list.flatMap((input, i) => {
        const parsed = input.length > 1000 ? { problem: 'must be at most 1000 characters' } : parseMailbox(input);
        if (!('problem' in parsed)) return [parsed];
        ctx.addIssue({ code: 'custom', path: single ? [] : [i], message: parsed.problem });
        return [];
      });
    })
    // Exactly one of the two forms (OpenAPI 3.1 takes a list of types).
    .openapi({
      type: ['string', 'array'],
      oneOf: [mailbox, { type: 'array', items: mailbox, ...(opts.min ? { minItems: opts.min } : {}), maxItems: opts.max }],
      description: opts.description,
      ...(opts.example ? { example: opts.example } : {}),
    });
}

/** A line of a header: no CR or LF, then the length rule. */
const headerText = (max: number) => z.string()
  .refine((s) => !hasCrOrLf(s), CR_OR_LF)
  .refine((s) => !/[\x00\x7f]/.test(s), 'must not contain control characters')
  .refine((s) => s.length <= max, `must be at most ${max} characters`);

const EXTENSION_TYPES: Record<string, string> = {
  pdf: 'application/pdf', zip: 'application/zip', json: 'application/json', xml: 'application/xml',
  txt: 'text/plain', csv: 'text/csv', html: 'text/html', htm: 'text/html', ics: 'text/calendar',
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', svg: 'image/svg+xml', webp: 'image/webp',
};

/** `content_type` when given, else a guess from the filename's extension, else `application/octet-stream`. */
export function attachmentContentType(filename: string, given?: string): string {
  if (given) return given;
  const ext = /\.([A-Za-z0-9]+)$/.exec(filename)?.[1]?.toLowerCase();
  return (ext && EXTENSION_TYPES[ext]) || 'application/octet-stream';
}

const AttachmentSchema = z.object({
  filename: z.string()
    .refine((s) => !hasCrOrLf(s), CR_OR_LF)
    .refine((s) => !hasControl(s), 'must not contain control characters')
    .refine((s) => s.trim().length > 0, 'must not be empty')
    .refine((s) => s.length <= 255, 'must be at most 255 characters')
    .openapi({ example: 'invoice.pdf' }),
  content: z.string()
    .refine(isBase64, 'must be base64')
    .openapi({ description: 'The bytes, base64 (standard alphabet; padding and line breaks allowed)', example: 'JVBERi0xLjQK' }),
  content_type: z.string()
    .refine((s) => !hasCrOrLf(s), CR_OR_LF)
    .refine((s) => safeContentType(s) === s.trim() && s.trim() !== '', 'must be a media type (type/subtype)')
    .optional()
    .openapi({ description: 'Guessed from the filename\'s extension when omitted, else `application/octet-stream`', example: 'application/pdf' }),
}).strict().openapi('SendAttachment');

const HeadersSchema = z.record(z.string(), headerText(2000))
  .superRefine((headers, ctx) => {
    const names = Object.keys(headers);
    if (names.length > MAX_CUSTOM_HEADERS) ctx.addIssue({ code: 'custom', message: `must have at most ${MAX_CUSTOM_HEADERS} headers` });
    const seen = new Set<string>();
    for (const name of names) {
      // A name that could break the header line names the object, not itself.
      if (hasCrOrLf(name)) ctx.addIssue({ code: 'custom', message: `header name ${JSON.stringify(name)} must not contain CR or LF` });
      else if (!FIELD_NAME.test(name) || name.length > 100) {
        ctx.addIssue({ code: 'custom', message: `header name ${JSON.stringify(name)} is not an RFC 5322 field name (1 to 100 printable ASCII characters, no space or colon)` });
      } else if (reservedHeaderProblem(name)) {
        ctx.addIssue({ code: 'custom', path: [name], message: reservedHeaderProblem(name)! });
      } else if (seen.has(name.toLowerCase())) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'is given twice (header names are case-insensitive)' });
      }
      seen.add(name.toLowerCase());
    }
  })
  .openapi({
    description: `Custom headers, name → value (at most ${MAX_CUSTOM_HEADERS}); kept in the email log. Refused (case-insensitive): ${RESERVED_HEADERS.join(', ')}, and every name starting Content-, Resent- or ARC-.`,
    example: { 'X-Order-Id': 'A-1042' },
  });

/** Headers one-click unsubscribe writes (RFC 2369, RFC 8058), lower case. */
export const LIST_UNSUBSCRIBE_HEADERS = ['list-unsubscribe', 'list-unsubscribe-post'];

/** The built-in streams; a project may define more (`message_streams`). */
export const BUILT_IN_STREAMS = ['transactional', 'broadcast'] as const;
export const STREAM_KINDS = BUILT_IN_STREAMS;
export type StreamKind = (typeof STREAM_KINDS)[number];

/** A stream's name: lower case letters, digits, `-` and `_`, 1 to 32, starting with a letter or digit. */
export const StreamName = z.string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, 'must be 1 to 32 lower-case letters, digits, - or _, starting with a letter or digit')
  .openapi({ example: 'broadcast' });

export const SendMessageSchema = z.object({
  from: MailboxSchema.openapi({ type: 'string', example: 'Acme <news@acme.test>', description: 'Exactly one address of a verified domain of the project, bare or as `Name <address>`; the From header is composed from its name and address' }),
  to: AddressList({ min: 1, max: MAX_RECIPIENTS, tooMany: `must have at most ${MAX_RECIPIENTS} recipients`, example: 'ann@example.org',
    description: `The recipients: one address as a string, or an array of 1 to ${MAX_RECIPIENTS}; \`to\`, \`cc\` and \`bcc\` together at most ${MAX_RECIPIENTS}` }),
  cc: AddressList({ max: MAX_RECIPIENTS, tooMany: `must have at most ${MAX_RECIPIENTS} recipients`,
    description: 'Copy recipients, shown in the Cc header: one address as a string, or an array' }).optional(),
  bcc: AddressList({ max: MAX_RECIPIENTS, tooMany: `must have at most ${MAX_RECIPIENTS} recipients`,
    description: 'Recipients no header shows: one address as a string, or an array' }).optional(),
  reply_to: AddressList({ max: MAX_REPLY_TO, tooMany: `must have at most ${MAX_REPLY_TO} addresses`,
    description: `One address as a string, or an array of them (at most ${MAX_REPLY_TO})` }).optional(),
  subject: z.string()
    .refine((s) => !hasCrOrLf(s), CR_OR_LF)
    .refine((s) => !/[\x00\x7f]/.test(s), 'must not contain control characters')
    .refine((s) => s.trim().length > 0, 'must not be empty')
    .refine((s) => s.length <= 998, 'must be at most 998 characters')
    .optional()
    .openapi({ example: 'Your order has shipped', description: 'Required unless `template_id` is given (then refused: the template has the subject)' }),
  html: z.string().optional().openapi({ example: '<p>It is on its way.</p>' }),
  text: z.string().optional().openapi({ example: 'It is on its way.' }),
  tracking: z.object({
    opens: z.boolean().optional().openapi({ description: 'Append an open pixel to the HTML' }),
    clicks: z.boolean().optional().openapi({ description: 'Rewrite the HTML\'s http(s) links to the tracking host' }),
  }).strict().optional()
    .openapi({ description: 'Open and click tracking for this message (docs/tracking.md), over the from-domain\'s setting (`PUT /api/v1/domains/{id}/tracking`); a key left out follows the domain, and the domain\'s default is off. Only the HTML part is changed, before DKIM signing; the text part never is. Opens and clicks become `email.opened` / `email.clicked` events and analytics counts.', example: { opens: true, clicks: true } }),
  template_id: Uuid.optional()
    .openapi({ description: 'Send the template\'s active version, rendered with `data`, instead of `subject`, `html` and `text` (exactly one of the two ways). Resolved at send time: the very next send after an activation uses the new version. A render that fails or crosses a bound (`templates.max_nesting_depth`, `templates.max_render_steps`, `templates.max_rendered_bytes`) is 422 naming it, and nothing is sent. See docs/template-rendering.md.' }),
  language: RenderLanguage.optional(),
  data: TemplateData.optional()
    .openapi({ type: 'object', additionalProperties: true, description: 'The values the template\'s variables read (only with `template_id`); a variable the template uses and the data lacks is 422 `missing variable: <name>`', example: { name: 'Ada' } }),
  headers: HeadersSchema.optional(),
  attachments: z.array(AttachmentSchema).max(MAX_ATTACHMENTS, `must have at most ${MAX_ATTACHMENTS} attachments`).optional()
    .openapi({ description: 'Their decoded sizes together at most `send.max_attachment_bytes` (10 MiB by default)' }),
  send_at: z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp with a time zone (2026-11-27T09:00:00Z or 2026-11-27T10:00:00+01:00)' })
    // Checked against the clock at each request: a retry of the same body (the Idempotency-Key replay)
    // only ever finds it further in the past, which is accepted, so a replay is never refused by it.
    // (Written so that a text the format check refused, NaN here, adds no second problem.)
    .refine((s) => !(Date.parse(s) > Date.now() + MAX_SCHEDULE_HOURS * 3_600_000), `must be at most ${MAX_SCHEDULE_HOURS} hours ahead`)
    .optional()
    .openapi({
      description: `Deliver no earlier than this (RFC 3339 with a time zone), at most ${MAX_SCHEDULE_HOURS} hours ahead; a time in the past (or now) is sent at once. Until then the recipients are \`queued\` and can be canceled (\`POST /api/v1/emails/{id}/cancel\`). The plan limits count the send when it is accepted, not when it leaves.`,
      example: '2026-11-27T09:00:00Z',
    }),
  stream: StreamName.optional()
    .openapi({ description: 'The message stream (docs/sending.md, "Streams"): `transactional` (the default), `broadcast`, or one the project defined (`POST /api/v1/streams`). Broadcast mail carries one-click unsubscribe (RFC 8058) and needs DMARC on the from-domain; a suppression of a stream holds for that stream only.', example: 'transactional' }),
  list_unsubscribe: z.boolean().optional()
    .openapi({ description: 'Add `List-Unsubscribe` and `List-Unsubscribe-Post` (one-click, RFC 8058) to this message: always on for a broadcast stream (`false` is refused there), off by default on a transactional one. With it, a custom `List-Unsubscribe` or `List-Unsubscribe-Post` header is refused (the service writes them).' }),
  tags: z.array(z.string()
    .refine((s) => !hasControl(s), 'must not contain control characters')
    .refine((s) => s.trim().length > 0, 'must not be empty')
    .refine((s) => s.length <= 100, 'must be at most 100 characters'))
    .max(MAX_TAGS, `must have at most ${MAX_TAGS} tags`).optional()
    .openapi({ description: `At most ${MAX_TAGS}; the email log filters by tag`, example: ['shipping'] }),
}).strict().superRefine((m, ctx) => {
  const total = m.to.length + (m.cc?.length ?? 0) + (m.bcc?.length ?? 0);
  if (total > MAX_RECIPIENTS) {
    ctx.addIssue({ code: 'custom', path: ['to'], message: `must have at most ${MAX_RECIPIENTS} recipients, cc and bcc included (has ${total})` });
  }
  if (m.headers) {
    for (const name of Object.keys(m.headers)) {
      if (LIST_UNSUBSCRIBE_HEADERS.includes(name.toLowerCase()) && (m.list_unsubscribe || m.stream === 'broadcast')) {
        ctx.addIssue({ code: 'custom', path: ['headers', name], message: 'is written by the service on this message (one-click unsubscribe, docs/sending.md): drop it, or send on a transactional stream without list_unsubscribe' });
      }
    }
  }
  if (m.stream === 'broadcast' && m.list_unsubscribe === false) {
    ctx.addIssue({ code: 'custom', path: ['list_unsubscribe'], message: 'cannot be false on the broadcast stream: broadcast mail always carries one-click unsubscribe (RFC 8058)' });
  }
  if (m.template_id !== undefined) {
    // One way to give the content: the template's, or the body's own.
    for (const name of ['subject', 'html', 'text'] as const) {
      if (m[name] !== undefined) ctx.addIssue({ code: 'custom', path: [name], message: 'must not be given with template_id: the template has the content (give one or the other)' });
    }
    return;
  }
  for (const name of ['language', 'data'] as const) {
    if (m[name] !== undefined) ctx.addIssue({ code: 'custom', path: [name], message: 'is only taken with template_id' });
  }
  if (m.subject === undefined) ctx.addIssue({ code: 'custom', path: ['subject'], message: 'is required (or give template_id)' });
  if (!m.html && !m.text) ctx.addIssue({ code: 'custom', path: ['html'], message: 'html or text is required' });
}).openapi('SendEmail');

export const SendBatchSchema = z.object({
  messages: z.array(SendMessageSchema)
    .min(1, 'must have at least one message')
    .max(MAX_BATCH_MESSAGES, `must have at most ${MAX_BATCH_MESSAGES} messages`),
}).strict().openapi('SendBatch');

export const IdempotencyHeaders = z.object({
  'idempotency-key': z.string()
    .regex(/^[\x20-\x7e]{1,255}$/, 'must be 1 to 255 printable ASCII characters')
    .optional()
    .openapi({
      param: { name: 'idempotency-key', in: 'header' },
      description: 'Makes a retry safe: for 24 hours the same key with the same body answers the first answer again (same ids, nothing written); with another body 409.',
      example: 'order-1042-shipped',
    }),
});

export type SendMessageInput = z.infer<typeof SendMessageSchema>;
