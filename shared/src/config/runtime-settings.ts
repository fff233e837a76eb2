// The settings an operator may change while the service runs
// (`PATCH /api/v1/admin/settings`, docs/settings.md). Each is read by the edge
// from the request's settings (or the cron run's), where stored overrides are
// layered over the environment. Everything else needs the environment and a
// restart: the database and the encryption key, the public URL and proxies,
// what relay nodes read (listeners, spool, outbound delivery, ACME), what the
// Durable Objects read (webhook attempts and timeouts, the event stream and
// its session check, which reads console.session_idle_timeout),
// and the private-target guards (webhook and SMTP-server URLs are an attacker's
// input: loosening that guard stays a deliberate change of the environment).
import type { SettingName } from './settings.js';

export const runtimeSettings: ReadonlySet<SettingName> = new Set<SettingName>([
  'ratelimit.enabled',
  'ratelimit.login_per_minute',
  'ratelimit.oidc_per_minute',
  'ratelimit.api_per_minute',
  'ratelimit.ses_webhook_per_minute',
  'ratelimit.relay_node_chatter_per_minute',
  'ratelimit.relay_node_inbound_per_minute',
  'cors.allowed_origins',
  'console.session_max_age',
  'console.invitation_ttl',
  'console.password_reset_ttl',
  'domains.max_per_project',
  'relay_nodes.max_per_project',
  'send.max_attachment_bytes',
  'audit_log_retention_days',
  'delivery_records_retention_days',
  // Streams and the bulk-sender rules (docs/sending.md, docs/analytics.md): read by the edge per request and per cron run.
  'ratelimit.unsubscribe_per_minute',
  'sending.unsubscribe_link_ttl',
  'sending.broadcast_requires_dmarc',
  'sending.complaint_threshold_basis_points',
]);

export const isRuntimeSetting = (name: string): name is SettingName => runtimeSettings.has(name as SettingName);
