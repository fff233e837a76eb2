// Every setting the service reads, declared once. Names follow the spec; the
// env name of each is derived by `envName` (SERVICE_ + upper case, dots → _).
import { z } from 'zod';
import { isIpOrCidr } from '../ip.js';
import { boolean, duration, integer, list, string, type Setting } from './define.js';

const cidr = z.string().refine(isIpOrCidr, 'expected an IP address or CIDR range');
const httpUrl = z.string().refine((s) => s === '' || /^https?:\/\/[^/]+/.test(s), 'expected an http(s) URL');

type ListenerSettings<N extends string> =
  & Record<`${N}.rate_per_minute`, Setting<number>>
  & Record<`${N}.proxy_protocol.enabled` | `${N}.tls.enabled`, Setting<boolean>>
  & Record<`${N}.proxy_protocol.trusted`, Setting<string[]>>;

/** The settings every SMTP listener has, under its own prefix. */
const listener = <N extends string>(name: N, ratePerMinute: number): ListenerSettings<N> => ({
  [`${name}.rate_per_minute`]: integer(ratePerMinute, `New SMTP sessions per client IP per minute on the ${name} listener; 0 disables.`),
  [`${name}.proxy_protocol.enabled`]: boolean(false, `Accept PROXY protocol v1/v2 headers on the ${name} listener.`),
  [`${name}.proxy_protocol.trusted`]: list([], `Peers (IPs or CIDRs) that must send a PROXY header on the ${name} listener; may not be empty when enabled.`, cidr),
  [`${name}.tls.enabled`]: boolean(true, `Offer STARTTLS on the ${name} listener.`),
}) as ListenerSettings<N>;

export const settings = {
  'server.public_url': string('http://127.0.0.1:8787', 'Public base URL of the service; its host is the service\'s own origin.', { schema: httpUrl }),
  'server.trusted_proxies': list([], 'IPs or CIDRs of every proxy hop whose X-Forwarded-For is believed.', cidr),
  'cors.allowed_origins': list([], 'Extra origins allowed to make cookie-authenticated mutating requests.', httpUrl),
  'server.max_body_bytes': integer(1_048_576, 'Largest request body the HTTP API reads, in bytes; a larger one is refused with 413 before it is parsed. The relay inbound-forwarding route sets its own, larger limit.', z.number().int().min(1)),

  'database.url': string('', 'PostgreSQL (Neon) connection string.', { secret: true }),
  'database.crypto.encryption_key': string('', 'Key (base64, 32 bytes) sealing webhook secrets, private keys and SMTP passwords.', { secret: true }),

  'ratelimit.enabled': boolean(true, 'Master switch of the HTTP request rate limits.'),
  'ratelimit.login_per_minute': integer(10, 'Console sign-in attempts per client IP per minute.'),
  'ratelimit.oidc_per_minute': integer(30, 'OIDC callbacks per client IP per minute.'),
  'ratelimit.api_per_minute': integer(120, '/api/v1 requests per API key (else per client IP) per minute.'),
  'ratelimit.ses_webhook_per_minute': integer(600, 'POST /webhooks/ses requests per client IP per minute.'),
  'ratelimit.relay_node_chatter_per_minute': integer(600, 'Relay node heartbeats, certificate renewal and status per node per minute.'),
  'ratelimit.relay_node_inbound_per_minute': integer(1200, 'Messages a relay node forwards to the platform per minute (runaway guard).'),

  ...listener('submission', 60),
  ...listener('inbound', 120),
  ...listener('relay_node.inbound', 120),

  'webhook.max_attempts': integer(3, 'Delivery attempts per event, including the first.', z.number().int().min(1).max(20)),
  'webhook.retry_delay': duration(10_000, 'Fixed delay between delivery attempts.'),
  'webhook.timeout': duration(10_000, 'Time limit of one delivery request.'),
  'webhook.allow_private_targets': boolean(false, 'Allow webhook URLs resolving to loopback, RFC 1918 or other reserved space.'),

  'acme.enabled': boolean(false, 'Obtain listener certificates over ACME for `acme.hosts`.'),
  'acme.hosts': list([], 'Host names ACME may obtain certificates for.'),

  'audit_log_retention_days': integer(90, 'Days audit events are kept; 0 keeps them forever.'),
  'audit.queue_size': integer(1000, 'Audit events an isolate holds before writing them; beyond it events are dropped and each drop logged.'),
} as const;

export type SettingName = keyof typeof settings;

/** Configuration keys that were removed: they still parse, and any set are named in the boot log. */
export const removedSettings = ['tls.mode', 'tls.cert', 'tls.key', 'tls.fqdn', 'tls.alg', 'tls.cachedir'] as const;
