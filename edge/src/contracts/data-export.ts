// The data export's line format (docs/data-export.md): NDJSON, a header line,
// one line per record carrying it as the API's own GET returns it, and an
// `end` line with the counts, whose absence marks an incomplete export.
import { z } from '@hono/zod-openapi';
import { ProjectSchema } from './admin.js';
import { ApiKeySchema } from './api-key.js';
import { BounceSchema } from './bounce.js';
import { Timestamp } from './common.js';
import { DomainSchema } from './domain.js';
import { EmailDetailSchema } from './email.js';
import { InboundEmailSchema } from './inbound-email.js';
import { RelayNodeSchema } from './relay-node.js';
import { SmtpServerSchema } from './smtp-server.js';
import { StylesheetSchema } from './stylesheet.js';
import { SuppressionSchema } from './suppression.js';
import { LocalizationRecordSchema, TemplateSchema, VersionSchema } from './template.js';
import { WebhookDeliverySchema, WebhookSchema } from './webhook.js';

/** Raised when a line's shape changes incompatibly; a reader checks it on the first line. */
export const DATA_EXPORT_VERSION = 1;

export const DATA_EXPORT_MEDIA_TYPE = 'application/x-ndjson';

const AuditEventRecord = z.object({
  id: z.uuid(), category: z.string(), type: z.string(), project_id: z.uuid().nullable(), actor_id: z.uuid().nullable(),
  actor_email: z.string().nullable(), client_ip: z.string().nullable(), method: z.string().nullable(),
  path: z.string().nullable(), status: z.number().int().nullable(), created_at: Timestamp,
}).openapi({ description: 'As `GET /api/v1/audit-log` lists it' });

/** Each record type, the schema of its `data`, and what that record is. */
const RECORDS = {
  project: [ProjectSchema, 'The project itself (one line)'],
  api_key: [ApiKeySchema, 'API keys as `GET /api/v1/api-keys` lists them: prefix, never the token or its hash'],
  domain: [DomainSchema, 'Domains as `GET /api/v1/domains/{id}` returns them: the DKIM public key in its DNS record, never the private key'],
  smtp_server: [SmtpServerSchema, 'The project\'s own SMTP servers as `GET /api/v1/smtp-servers` lists them: `has_password`, never the password'],
  webhook: [WebhookSchema, 'Webhooks as `GET /api/v1/webhooks` lists them: never the signing secret'],
  relay_node: [RelayNodeSchema, 'Relay nodes the project enrolled, as `GET /api/v1/relay/nodes` lists them: never the credential\'s hash'],
  stylesheet: [StylesheetSchema, 'Stylesheets as `GET /api/v1/stylesheets/{id}` returns them'],
  template: [TemplateSchema, 'Templates as `GET /api/v1/templates` lists them; their versions are `template_version` lines'],
  template_version: [VersionSchema.extend({ localizations: z.array(LocalizationRecordSchema) }), 'Every version of every template as `GET /api/v1/templates/{id}/versions` lists it, with its `localizations` as `GET .../versions/{versionId}/localizations` returns them'],
  suppression: [SuppressionSchema, 'Suppressions as `GET /api/v1/suppressions?include_expired=true` lists them: expired entries too'],
  email: [EmailDetailSchema, 'One per recipient, as `GET /api/v1/emails/{id}` returns it: content and every delivery attempt; sandbox captures included'],
  bounce: [BounceSchema, 'Bounces and complaints as `GET /api/v1/bounces/{id}` returns them'],
  inbound_email: [InboundEmailSchema, 'Received mail as `GET /api/v1/inbound-emails/{id}` returns it; raw bytes and attachments stay behind their download routes'],
  webhook_delivery: [WebhookDeliverySchema, 'Every kept webhook delivery with its attempt log, as `GET /api/v1/webhooks/{id}/deliveries` lists them'],
  audit_event: [AuditEventRecord, 'The project\'s audit trail'],
} as const;

export type DataExportType = keyof typeof RECORDS;
export const DATA_EXPORT_TYPES = Object.keys(RECORDS) as DataExportType[];
export const describeDataExportType = (type: DataExportType) => RECORDS[type][1];

const HeaderLine = z.object({
  type: z.literal('export'),
  version: z.literal(DATA_EXPORT_VERSION),
  project_id: z.uuid(),
  started_at: Timestamp,
}).openapi('DataExportHeader', { description: 'The first line' });

const recordLine = <T extends DataExportType>(type: T) => z.object({
  type: z.literal(type),
  data: RECORDS[type][0],
}).openapi({ description: RECORDS[type][1] });

const EndLine = z.object({
  type: z.literal('end'),
  counts: z.object(Object.fromEntries(DATA_EXPORT_TYPES.map((t) => [t, z.number().int()]))).openapi({ description: 'Record lines written, by type (every type, 0 included)' }),
  finished_at: Timestamp,
}).openapi('DataExportEnd', { description: 'The last line; an export without it was cut off' });

const ErrorLine = z.object({
  type: z.literal('error'),
  error: z.string().openapi({ example: 'export failed part way: start it again' }),
}).openapi('DataExportError', { description: 'The last line in place of `end` when a page could not be read: the export is incomplete' });

export const DataExportLineSchema = z.union([HeaderLine, ...DATA_EXPORT_TYPES.map(recordLine), EndLine, ErrorLine])
  .openapi('DataExportLine', { description: 'One line of the NDJSON body: the header, a record, or the end' });
