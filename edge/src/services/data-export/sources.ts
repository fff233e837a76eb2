// Every kind of record the export carries, in the order the lines come:
// the project, its configuration, then what it sent and received, then
// deliveries and the audit trail.
import { apiKeySource } from './api-keys.js';
import { auditEventSource } from './audit-events.js';
import { bounceSource } from './bounces.js';
import { domainSource } from './domains.js';
import { emailSource } from './emails.js';
import { inboundEmailSource } from './inbound-emails.js';
import { projectSource } from './project.js';
import { relayNodeSource } from './relay-nodes.js';
import { smtpServerSource } from './smtp-servers.js';
import { stylesheetSource } from './stylesheets.js';
import { suppressionSource } from './suppressions.js';
import { templateSource } from './templates.js';
import { templateVersionSource } from './template-versions.js';
import { webhookDeliverySource } from './webhook-deliveries.js';
import { webhookSource } from './webhooks.js';

export const EXPORT_SOURCES = [
  projectSource, apiKeySource, domainSource, smtpServerSource, webhookSource, relayNodeSource,
  stylesheetSource, templateSource, templateVersionSource,
  suppressionSource, emailSource, bounceSource, inboundEmailSource, webhookDeliverySource, auditEventSource,
];
