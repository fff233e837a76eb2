// Bodies of the outbound relay routes (docs/sending.md, "Relay protocol:
// outbound"). The contract is shared/src/relay-protocol/outbound.ts (the node
// parses with it too); this file only names the schemas and adds descriptions
// and examples for the OpenAPI document, as relay.ts does.
import { z } from '@hono/zod-openapi';
import {
  MAX_REPLY_CHARS,
  OutboundAttachment,
  OutboundClaim,
  OutboundClaimAnswer,
  OutboundLeaseRef,
  OutboundRenew,
  OutboundRenewAnswer,
  OutboundDkim,
  OutboundJob,
  OutboundMessage,
  OutboundMxRoute,
  OutboundResult,
  OutboundResults,
  OutboundResultsAnswer,
  OutboundSmtpRoute,
} from '@edgemail/shared';
import { arrayOf, asTimestamp } from './common.js';

export const ClaimSchema = OutboundClaim
  .extend({
    max: OutboundClaim.shape.max.meta({ description: 'How many recipients the node can take now (its free delivery slots)', example: 10 }),
  })
  .openapi('OutboundClaim');

const OutboundAttachmentSchema = OutboundAttachment.extend({
  content_base64: OutboundAttachment.shape.content_base64.meta({ description: 'The bytes, base64 (no line breaks)' }),
});

const message = OutboundMessage.shape;
const OutboundMessageSchema = OutboundMessage.extend({
  message_id: message.message_id.meta({ example: '<0b9b7c1e-4a8a-4c55-9d9f-1c3f1e0d2a11@acme.test>' }),
  date: asTimestamp(message.date, 'The Date header: the send\'s created_at, or a submitted message\'s own valid Date in its client\'s offset (docs/submission.md, "Kept as written")'),
  from: message.from.meta({ example: 'Acme <news@acme.test>' }),
  headers: message.headers.meta({ description: 'Custom headers, name → value' }),
  attachments: arrayOf(message.attachments, OutboundAttachmentSchema),
}).openapi('OutboundMessage', { description: 'Headers and content; never a Bcc header (blind recipients are in the envelope only)' });

const OutboundDkimSchema = OutboundDkim.extend({
  private_key_pem: OutboundDkim.shape.private_key_pem.meta({ description: 'PKCS#8 PEM, unsealed for this job' }),
}).openapi('OutboundDkim');

const OutboundRouteSchema = z.union([
  OutboundMxRoute.extend({ domain: OutboundMxRoute.shape.domain.meta({ description: 'The recipient\'s domain' }) }),
  OutboundSmtpRoute,
]).openapi('OutboundRoute', { description: 'The project\'s SMTP server if it has one, else one of the shared pool\'s (at random), else the recipient\'s MX' });

const job = OutboundJob.shape;
export const OutboundJobSchema = OutboundJob.extend({
  email_id: job.email_id.meta({ description: 'The recipient row' }),
  attempt: job.attempt.meta({ description: 'Number of this attempt (counted up at the claim); the result must carry it' }),
  lease_until: asTimestamp(job.lease_until, 'The recipient is this node\'s until then; after it, another claim may take it'),
  envelope: job.envelope.extend({
    from: job.envelope.shape.from.meta({ description: 'The bounce address: the bare from address', example: 'news@acme.test' }),
    to: job.envelope.shape.to.meta({ description: 'This one recipient', example: 'ann@example.org' }),
    return_path: job.envelope.shape.return_path.meta({
      description: 'MAIL FROM instead of `from` when set: the VERP return path `bounce-<email id>-<mac>@bounces.<public host>` (docs/bounces.md); set on `mx` routes when the host of `server.public_url` is a domain name, absent otherwise',
      example: 'bounce-0f8e6c1a2b3c4d5e6f708192a3b4c5d6-9c2e4a1b7d3f5e6a8b0c@bounces.mail.example.com',
    }),
  }),
  message: OutboundMessageSchema,
  dkim: OutboundDkimSchema.nullable().openapi({ description: 'Always set today: a recipient whose message cannot be signed is failed at the claim, never handed out' }),
  route: OutboundRouteSchema,
}).openapi('OutboundJob');

export const ClaimAnswerSchema = OutboundClaimAnswer.extend({
  jobs: arrayOf(OutboundClaimAnswer.shape.jobs, OutboundJobSchema).openapi({ description: 'Empty when nothing is due' }),
}).openapi('OutboundClaimAnswer');

const result = OutboundResult.shape;
export const OutboundResultSchema = OutboundResult.extend({
  email_id: result.email_id.meta({ format: 'uuid' }),
  outcome: result.outcome.meta({ description: '2xx | 4xx or no answer | 5xx' }),
  smtp_code: result.smtp_code.meta({ description: 'null when no SMTP answer came', example: 250 }),
  reply: result.reply.meta({ type: 'string', description: `The server's reply text, or why no answer came (cut to ${MAX_REPLY_CHARS} characters)` }),
  server: result.server.meta({ type: 'string', example: 'mx.example.org:25' }),
}).openapi('OutboundResult');

export type OutboundResultInput = z.infer<typeof OutboundResultSchema>;

export const ResultsSchema = OutboundResults
  .extend({ results: arrayOf(OutboundResults.shape.results, OutboundResultSchema) })
  .openapi('OutboundResults');

export const ResultsAnswerSchema = OutboundResultsAnswer.extend({
  accepted: OutboundResultsAnswer.shape.accepted.meta({ description: 'Recorded: the recipient moved on (sent, failed, or queued again)' }),
  stale: OutboundResultsAnswer.shape.stale.meta({ description: 'The node no longer holds that lease (expired and claimed again, or already reported): nothing changed' }),
}).openapi('OutboundResultsAnswer');

export const RenewSchema = OutboundRenew.extend({
  leases: arrayOf(OutboundRenew.shape.leases, OutboundLeaseRef.extend({
    email_id: OutboundLeaseRef.shape.email_id.meta({ format: 'uuid', description: 'The recipient row' }),
    attempt: OutboundLeaseRef.shape.attempt.meta({ description: 'The attempt the job was claimed at' }),
  }).openapi('OutboundLeaseRef')),
}).openapi('OutboundRenew');

export const RenewAnswerSchema = OutboundRenewAnswer.extend({
  renewed: OutboundRenewAnswer.shape.renewed.meta({ description: 'Extended leases: the new end, and the lease\'s length from the edge\'s now (`outbound.lease`), ms' }),
  lost: OutboundRenewAnswer.shape.lost.meta({ description: 'No longer this node\'s at that attempt (claimed again, or already reported): nothing changed; the node does not start such a job' }),
}).openapi('OutboundRenewAnswer');
