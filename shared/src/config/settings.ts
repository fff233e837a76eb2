// Every setting the service reads, declared once. Names follow the spec; the
// env name of each is derived by `envName` (SERVICE_ + upper case, dots → _).
import { z } from 'zod';
import { isIp, isIpOrCidr } from '../ip.js';
import { normalizeDomainName } from '../domain-name.js';
import { boolean, duration, integer, list, string, type Setting } from './define.js';
import { ENCRYPTION_KEY_PROBLEM, encryptionKeyBytes } from '../crypto/encryption-key.js';

const cidr = z.string().refine(isIpOrCidr, 'expected an IP address or CIDR range');
const httpUrl = z.string().refine((s) => s === '' || /^https?:\/\/[^/]+/.test(s), 'expected an http(s) URL');
// An ACME host: a canonical DNS name (http-01 proves no wildcard or IP address).
const acmeHost = z.string().superRefine((s, ctx) => {
  const read = normalizeDomainName(s);
  if ('problem' in read) ctx.addIssue({ code: 'custom', message: `"${s}" ${read.problem}` });
  else if (read.name !== s) ctx.addIssue({ code: 'custom', message: `"${s}" must be written as "${read.name}"` });
});
// Empty means not set: only the edge needs it (and refuses to serve without it).
const encryptionKey = z.string().refine((s) => s === '' || encryptionKeyBytes(s) !== null, ENCRYPTION_KEY_PROBLEM);

/** `1.1.1.1`, `1.1.1.1:53`, `2001:db8::1` or `[2001:db8::1]:53`: Node's resolver takes addresses, not host names. */
function isDnsServer(text: string): boolean {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(text);
  const v4 = /^([\d.]+)(?::(\d{1,5}))?$/.exec(text);
  const [host, port] = bracketed ? [bracketed[1]!, bracketed[2]] : v4 ? [v4[1]!, v4[2]] : [text, undefined];
  if (bracketed && !host.includes(':')) return false;
  return isIp(host) && (port === undefined || (Number(port) >= 1 && Number(port) <= 65535));
}
const dnsServer = z.string().refine(isDnsServer, 'expected an IP address, optionally with a port (1.1.1.1:53, [2001:db8::1]:53)');

type ListenerSettings<N extends string> =
  & Record<`${N}.rate_per_minute` | `${N}.greeting_delay`, Setting<number>>
  & Record<`${N}.max_sessions` | `${N}.max_sessions_per_ip` | `${N}.max_session_duration` | `${N}.idle_timeout`, Setting<number>>
  & Record<`${N}.max_messages_per_session` | `${N}.max_noop_rset_per_session` | `${N}.max_commands_per_session`, Setting<number>>
  & Record<`${N}.proxy_protocol.enabled` | `${N}.tls.enabled`, Setting<boolean>>
  & Record<`${N}.proxy_protocol.trusted`, Setting<string[]>>;

/** The settings every SMTP listener has, under its own prefix. */
const listener = <N extends string>(name: N, ratePerMinute: number): ListenerSettings<N> => ({
  [`${name}.rate_per_minute`]: integer(ratePerMinute, `New SMTP sessions per client IP per minute on the ${name} listener; 0 disables.`),
  [`${name}.proxy_protocol.enabled`]: boolean(false, `Accept PROXY protocol v1/v2 headers on the ${name} listener.`),
  [`${name}.proxy_protocol.trusted`]: list([], `Peers (IPs or CIDRs) that must send a PROXY header on the ${name} listener; may not be empty when enabled.`, cidr),
  [`${name}.tls.enabled`]: boolean(true, `Offer STARTTLS on the ${name} listener.`),
  // smtp-server waits a fixed 100 ms before greeting ("talk too soon" guard),
  // which bounds one-message-per-connection clients; 0 until the inbound
  // benchmark picks the default on measured numbers.
  [`${name}.greeting_delay`]: duration(0, `Pause before the 220 greeting on the ${name} listener; a client that talks during it is refused as talking too soon. 0 greets at once.`),
  // Bounds on what one client (or all of them) can hold open: without them a
  // single address exhausts the node's file descriptors with idle sessions.
  [`${name}.max_sessions`]: integer(500, `Open SMTP sessions the ${name} listener holds at once, from all clients; one more is answered \`421 4.7.0\` and closed. 0 disables.`),
  [`${name}.max_sessions_per_ip`]: integer(20, `Open SMTP sessions one client IP may hold at once on the ${name} listener; one more is answered \`421 4.7.0\` and closed. 0 disables.`),
  [`${name}.max_session_duration`]: duration(600_000, `Longest an SMTP session on the ${name} listener may last; past it the session is ended with \`421 4.4.2\`. A message whose data is still arriving gets the smaller of \`idle_timeout\` and 60 s more to end and be answered; after that the session is cut off with \`421 4.4.2\` and the partial message dropped. 0 disables.`),
  [`${name}.idle_timeout`]: duration(300_000, `Time the ${name} listener waits for the client's next command or data (RFC 5321 4.5.3.2 asks for at least 5 minutes) before ending the session.`),
  [`${name}.max_messages_per_session`]: integer(100, `Messages one SMTP session on the ${name} listener may send; MAIL FROM beyond it is answered \`421 4.7.0\` and the session closed. 0 disables.`),
  [`${name}.max_noop_rset_per_session`]: integer(50, `NOOP and RSET commands (counted together) one SMTP session on the ${name} listener may send; one more is answered \`421 4.7.0\` and the session closed. 0 disables.`),
  // Not only NOOP and RSET cost nothing and keep a session busy: EHLO, HELP, VRFY, an unknown command do too.
  [`${name}.max_commands_per_session`]: integer(100, `Commands outside a mail transaction (every one but MAIL, RCPT, DATA and BDAT: EHLO, HELO, NOOP, RSET, VRFY, HELP, STARTTLS, AUTH, unknown ones, …) one SMTP session on the ${name} listener may send; one more is answered \`421 4.7.0\` and the session closed. NOOP and RSET count here too, and also against \`max_noop_rset_per_session\`. 0 disables.`),
}) as ListenerSettings<N>;

type MxSettings<N extends string> =
  & Record<`${N}.max_message_size` | `${N}.max_header_size` | `${N}.mail_auth_timeout`, Setting<number>>
  & Record<`${N}.bare_newlines`, Setting<'normalize' | 'reject'>>
  & Record<`${N}.spam.rspamd_url`, Setting<string>>
  & Record<`${N}.spam.timeout`, Setting<number>>;

/** What an MX-facing listener accepts as message data, under its own prefix. */
const mx = <N extends string>(name: N): MxSettings<N> => ({
  [`${name}.max_message_size`]: integer(26_214_400, `Largest message (bytes) the ${name} listener accepts: advertised in EHLO SIZE, refused at MAIL FROM SIZE= and after the data with 552 5.3.4.`, z.number().int().min(1)),
  [`${name}.max_header_size`]: integer(262_144, `Largest message header block (bytes) the ${name} listener accepts; larger is refused with 552 5.3.4.`, z.number().int().min(1024)),
  [`${name}.mail_auth_timeout`]: duration(10_000, `Longest the ${name} listener spends on SPF, DKIM and DMARC checks of one message (off the event loop); past it the message is stored with \`temperror\` verdicts, never dropped.`),
  [`${name}.bare_newlines`]: string('normalize', `A bare CR or LF in message data on the ${name} listener: \`normalize\` rewrites it to CRLF, \`reject\` refuses the message with 554 5.5.0.`, { schema: z.enum(['normalize', 'reject']) }) as Setting<'normalize' | 'reject'>,
  // docs/inbound.md, "Spam scoring": rspamd scores each message as it arrives; projects set the thresholds.
  [`${name}.spam.rspamd_url`]: string('', `rspamd's normal worker (\`http://127.0.0.1:11333\`) the ${name} listener asks for each message's spam score (\`POST /checkv2\`, the message streamed as it arrives, with the SMTP envelope). Empty: no spam scoring. rspamd unreachable or too slow never costs a message: it is stored unscored.`, { schema: httpUrl }),
  [`${name}.spam.timeout`]: duration(5_000, `Longest rspamd may take to score a message on the ${name} listener, from its last byte (and longest it may leave the data unread); past it the message is stored unscored (\`spam: null\`) and the failure counted.`),
}) as MxSettings<N>;

export const settings = {
  'server.public_url': string('http://127.0.0.1:8787', 'Public base URL of the service; its host is the service\'s own origin.', { schema: httpUrl }),
  'server.trusted_proxies': list([], 'IPs or CIDRs of every proxy hop whose X-Forwarded-For is believed.', cidr),
  'cors.allowed_origins': list([], 'Extra origins allowed to make cookie-authenticated mutating requests.', httpUrl),
  'server.max_body_bytes': integer(1_048_576, 'Largest request body the HTTP API reads, in bytes; a larger one is refused with 413 before it is parsed. The relay inbound-forwarding route sets its own, larger limit.', z.number().int().min(1)),

  'database.url': string('', 'PostgreSQL (Neon) connection string.', { secret: true }),
  'database.crypto.encryption_key': string('', 'Key (base64 of 32 random bytes: `openssl rand -base64 32`) sealing webhook secrets, private keys and SMTP passwords with AES-256-GCM. Required by the edge, which answers every request with 500 naming this setting when it is missing; `pnpm dev` generates one into `.data/encryption-key`.', { schema: encryptionKey, secret: true }),

  'ratelimit.enabled': boolean(true, 'Master switch of the HTTP request rate limits.'),
  'ratelimit.login_per_minute': integer(10, 'Console sign-in attempts per client IP per minute.'),
  'ratelimit.oidc_per_minute': integer(30, 'OIDC callbacks per client IP per minute.'),
  'ratelimit.api_per_minute': integer(120, '/api/v1 requests per API key (else per client IP) per minute.'),
  'ratelimit.ses_webhook_per_minute': integer(600, 'POST /webhooks/ses requests per client IP per minute.'),
  'ratelimit.relay_node_chatter_per_minute': integer(600, 'Relay node heartbeats, certificate renewal and status per node per minute.'),
  'ratelimit.relay_node_inbound_per_minute': integer(1200, 'Messages a relay node forwards to the platform per minute (runaway guard).'),
  'ratelimit.unsubscribe_per_minute': integer(6000, 'One-click unsubscribe requests (`/unsubscribe/…`, docs/sending.md) per client IP per minute. Mailbox providers post for many users from few addresses, hence the high default.'),
  'ratelimit.webhook_replay_per_minute': integer(5, 'Replays started per webhook per minute (`POST /api/v1/webhooks/{id}/replay`, docs/webhooks.md), counted per project and webhook; 429 with Retry-After beyond. A replay may queue up to 10,000 deliveries, so a client retrying in a loop is stopped here.'),
  'ratelimit.tracking_per_minute': integer(6000, 'Open-pixel and tracked-link requests (`/t/…`, docs/tracking.md) per client IP per minute, counted in each isolate (no Durable Object call: the endpoints stay cheap); 429 beyond. Mailbox providers\' image proxies fetch for many readers from few addresses, hence the high default.'),

  ...listener('submission', 60),
  'submission.max_auth_failures': integer(10, 'Failed SMTP AUTH attempts (`535 5.7.8`) one client IP (IPv6: its /64) may make on the submission listener per `submission.auth_failure_window`; the next is answered `421 4.7.0` and the session closed, as are new sessions from that address until the window ends. 0 disables.'),
  'submission.auth_failure_window': duration(900_000, 'The window `submission.max_auth_failures` counts in.'),
  'submission.lease_ttl': duration(2_000, 'How long a relay node answers SMTP submissions from one lease of the edge (the key judged again, the verified sending domains, the plan\'s remaining allowance) before it asks again: a key revoked or expired, a domain unverified, stops a session\'s messages within this time (docs/submission.md, "Answered at the node"). Set on the edge, which tells the node with each lease.'),
  ...listener('inbound', 120),
  ...mx('inbound'),
  // On a relay node; each one left unset follows its `inbound.*` twin (see load.ts).
  ...listener('relay_node.inbound', 120),
  ...mx('relay_node.inbound'),
  'dns.doh_url': string('https://cloudflare-dns.com/dns-query', 'DNS-over-HTTPS resolver (JSON API, `application/dns-json`) the edge asks: webhook hosts at create and before every delivery, and domain records at verification. Workers have no other DNS client.', { schema: httpUrl.refine((s) => s !== '', 'expected an http(s) URL') }),
  'dns.servers': list([], 'DNS servers (address or address:port) for SPF, DKIM and DMARC checks at ingest; the system resolver when empty.', dnsServer),

  'webhook.max_attempts': integer(3, 'Delivery attempts per event, including the first.', z.number().int().min(1).max(20)),
  'webhook.retry_delay': duration(10_000, 'Fixed delay between delivery attempts.'),
  'webhook.timeout': duration(10_000, 'Time limit of one delivery request.'),
  'webhook.disable_after': duration(432_000_000, 'A webhook whose every delivery attempt has failed for this long (since the first failure after its last success, `120h` = 5 days) and at least `webhook.disable_after_failures` times is disabled: it receives nothing until re-enabled (`POST /api/v1/webhooks/{id}/enable`); the project\'s other webhooks get `webhook.disabled`, its owners a mail, the audit log an event (docs/webhooks.md). 0 never disables.'),
  'webhook.disable_after_failures': integer(10, 'Consecutive failed attempts a webhook needs, besides failing for `webhook.disable_after`, to be disabled: a webhook that gets an event every few days is not disabled by two failures.', z.number().int().min(1)),
  'relay_node.spool.min_free_bytes': integer(268_435_456, 'Relay node: free space (bytes) the spool\'s file system must keep; below it new mail is answered `452 4.3.1` (at MAIL FROM and after the data) until space returns. Never 250 what cannot be fsynced.', z.number().int().min(0)),
  'relay_node.spool.max_dead_letter_bytes': integer(1_073_741_824, 'Relay node: most bytes the spool\'s `dead/` folder (messages the edge refused for good) may hold; while it is full new mail is answered `452 4.3.1` rather than dropped. Counted in the heartbeat.', z.number().int().min(1)),
  'relay_node.log_level': string('info', 'Relay node: `info` logs one line per message received, delivered or refused, per error and per change of state (the edge unreachable, back); `debug` adds each step of a message (spooled, accepted at the SMTP door, captured, hosts tried). `relay start --verbose` and `pnpm dev --verbose` set `debug`.', { schema: z.enum(['info', 'debug']) }) as Setting<'info' | 'debug'>,
  'relay_node.drain_timeout': duration(10_000, 'Relay node (`edgemail-relay start`, `pnpm edgemail relay start`): on SIGTERM or SIGINT the listeners stop accepting at once, and open SMTP sessions get this long to finish (a message whose data is arriving is answered as usual); the rest are answered `421 4.3.2` and closed, their unfinished messages left to the sender\'s retry. Deliveries in flight get up to 30 s more; the spool is kept for the next start. Keep the service manager\'s stop timeout above both (the unit\'s `TimeoutStopSec=90`).'),
  'relay_node.log_format': string('auto', 'Relay node log lines: `text` (a time, the level, the message and its fields as JSON) or `json` (one JSON object per line on stdout: `time`, `level`, `msg` and the fields, for journald and log shippers). `auto` is `json` for the packaged `edgemail-relay` binary and `text` for `pnpm edgemail relay start` and `pnpm dev`.', { schema: z.enum(['auto', 'text', 'json']) }) as Setting<'auto' | 'text' | 'json'>,
  // Operators scrape these (docs/operations.md); a developer's machine need not open one more port.
  'relay_node.metrics.enabled': boolean(false, 'Relay node: serve Prometheus metrics (`/metrics`) and health (`/healthz`, `/readyz`) over HTTP on `relay_node.metrics.host`:`relay_node.metrics.port`. Off in `pnpm dev`; the packaged systemd unit turns it on.'),
  'relay_node.metrics.host': string('127.0.0.1', 'Relay node: address of the metrics listener. A loopback address by default; another address exposes the node\'s counters to that network (they carry no tenant data, but firewall the port).', { schema: z.string().refine(isIp, 'expected an IP address') }),
  'relay_node.metrics.port': integer(9465, 'Relay node: port of the metrics listener.', z.number().int().min(0).max(65535)),
  'relay_node.metrics.ready_window': duration(90_000, 'Relay node: `/readyz` answers 200 only while the edge answered the node within this long (and its listeners are bound); 503 naming the reason otherwise. Heartbeats come every 30 s.'),

  'domains.max_per_project': integer(100, 'Domains one project may register; one more is refused with 400. 0 disables the cap.'),
  'relay_nodes.max_per_project': integer(10, 'Relay nodes one project may enrol (revoked nodes do not count); one more is refused with 400. 0 disables the cap.'),
  'inbound.storage_quota_bytes': integer(10_737_418_240, 'Inbound mail (bytes of raw messages) one project may keep stored, counted once a minute; once it is reached relay nodes answer RCPT for its domains with `452 4.2.2` (mail already accepted is still stored). 0 disables the quota.'),
  'delivery_records_retention_days': integer(30, 'Days webhook deliveries and attempts, and outbound delivery attempts, are kept; 0 keeps them forever.'),

  'webhook.allow_private_targets': boolean(false, 'Allow webhook URLs resolving to loopback, RFC 1918 or other reserved space.'),

  'smtp_servers.allow_private_targets': boolean(false, 'Allow a project\'s SMTP servers (where relay nodes deliver its mail, and the test route connects) on loopback, RFC 1918 or other reserved space; refused at create, by the test route and by relay nodes before delivering otherwise. The shared pool is the operator\'s and is not checked.'),
  'send.max_attachment_bytes': integer(10_485_760, 'Largest total size (bytes, decoded) of the attachments of one message on the send routes; more is refused with 400 naming `attachments`.', z.number().int().min(0)),
  // Rendering a template (docs/template-rendering.md, "Bounds of a render"): a few bytes of sections nested over a list grow as
  // the list's length to the power of the depth; each bound stops the render as it is crossed, with 422 naming it.
  'templates.max_nesting_depth': integer(8, 'Deepest a template may nest sections (`{{#a}}{{#b}}…`) in its subject, HTML or text: deeper is refused with 422 naming this setting when the localizations are saved and when they render.', z.number().int().min(1).max(100)),
  'templates.max_render_steps': integer(100_000, 'Most steps one render of a template may take (each piece of text, variable and section visited, and each list item a section renders), counted over its subject, HTML and text together: preview, send-test and sends by template. One more stops it with 422 naming this setting; nothing is sent.', z.number().int().min(1000)),
  'templates.max_rendered_bytes': integer(1_048_576, 'Largest rendered template (bytes, UTF-8): its subject, HTML with the stylesheet and text together, as `server.max_body_bytes` bounds a message sent without a template. The render stops as it crosses it, with 422 naming this setting; nothing is sent.', z.number().int().min(1024)),

  'tracking.machine_window': duration(10_000, 'Open and click tracking (docs/tracking.md): a pixel fetched or a link followed sooner than this after the message was handed to a relay node is a machine\'s (a scanner\'s or a privacy proxy\'s prefetch): reported with `machine: true`, never counted as human.'),
  'outbound.lease': duration(300_000, 'How long a recipient a relay node claimed stays its own; a node that reports nothing by then loses it back to the queue.'),
  'outbound.retry_delay': duration(60_000, 'First wait after a 4xx (deferred) delivery; it doubles on each deferral, up to an hour.'),
  'outbound.max_age': duration(172_800_000, 'How long a deferred recipient is retried from when it was sent; then it fails as expired.'),
  'outbound.concurrency': integer(20, 'Deliveries a relay node makes at once (to all destinations together; `outbound.max_sessions_per_destination` bounds those to one).', z.number().int().min(1).max(500)),
  'outbound.max_sessions_per_destination': integer(20, 'Relay node: SMTP sessions it keeps open at once to one destination (an MX host, the smarthost, an SMTP server), each reused for the next message to it, as Postfix\'s `default_destination_concurrency_limit` (20). Deliveries beyond it wait for a free session; `outbound.concurrency` bounds them all.', z.number().int().min(1).max(100)),
  'outbound.compose_threads': integer(0, 'Relay node: worker threads that compose and DKIM-sign outbound messages, off the thread that holds the SMTP sessions and talks to the edge. 0: the cores less one, at least 1.', z.number().int().min(0).max(64)),
  'outbound.require_tls': boolean(false, 'Refuse to deliver (defer) to a recipient MX that does not offer STARTTLS; by default TLS is used when offered.'),
  'outbound.smarthost': string('', 'Relay node: `host:port` every message is relayed through instead of the recipient\'s MX (project and shared-pool SMTP servers still come first). Empty delivers to MX.'),
  'outbound.capture_dir': string('', 'Relay node: send nothing to recipients\' MX (or the smarthost); write each such message as an .eml file into this directory instead. A project\'s or the shared pool\'s SMTP server still gets its mail. `pnpm dev` sets it (no Internet).'),
  'outbound.allow_private_mx': boolean(false, 'Relay node: deliver to recipient MX hosts (and A/AAAA fallbacks) on loopback, RFC 1918 or other reserved space. Off, such addresses are dropped, and a recipient left with none fails naming the rule. For closed networks only.'),
  'outbound.mx_port': integer(25, 'Relay node, tests only: the port of recipient MX hosts. Production is always 25.', z.number().int().min(1).max(65535)),
  'outbound.helo_name': string('', 'Relay node: the name it gives in EHLO/HELO on every delivery (MX, smarthost, a project\'s or the shared pool\'s SMTP server). Empty: the host of `server.public_url`. It must be a fully qualified domain name (receivers refuse bare words such as `vm`), ideally the one the node\'s outbound address resolves back to; otherwise `relay start` refuses to start, naming this setting. An IP address (set here, or the host of `server.public_url`, as in `pnpm dev`) is sent as an address literal: `[192.0.2.1]`, `[IPv6:2001:db8::1]`.'),

  // Streams and bulk-sender rules (docs/sending.md, "Streams", "One-click unsubscribe"; docs/analytics.md, "Sender health").
  'sending.unsubscribe_link_ttl': { ...duration(5_184_000_000, 'How long the one-click unsubscribe link (and `mailto:` address) of a message stays valid from when it was sent; past it a POST changes nothing (410). Gmail and Yahoo ask that it work for at least 30 days. 1d to 365d.'), schema: z.number().int().min(86_400_000).max(31_536_000_000) },
  'sending.broadcast_requires_dmarc': boolean(true, 'Refuse broadcast mail (the `broadcast` stream and project streams of that kind) from a domain whose last verification found no DMARC record (`_dmarc.<domain>`): Gmail\'s and Yahoo\'s bulk sender rule. Off, broadcast mail is sent without it.'),
  'sending.complaint_threshold_basis_points': integer(30, 'A project\'s complaint rate (complaints per delivered email over the trailing 7 days, in hundredths of a percent) above which it gets the `project.complaint_threshold_crossed` audit event, the `project.complaint_threshold_crossed` webhook event and a notice in `GET /api/v1/usage`, once per crossing. 30 = 0.3%, the bulk sender limit of Gmail and Yahoo. 0 disables.', z.number().int().min(0).max(10_000)),

  'acme.enabled': boolean(false, 'Obtain listener certificates over ACME for `acme.hosts` (docs/acme.md). Read by the edge (it grants the orders and stores the certificates) and by relay nodes (they order, over http-01): set it on both.'),
  'acme.hosts': list([], 'Host names ACME may obtain certificates for, one certificate each; each must resolve to the relay nodes (http-01 is answered there). No wildcards: http-01 cannot prove them.', acmeHost),
  'acme.directory_url': string('https://acme-v02.api.letsencrypt.org/directory', 'The ACME directory relay nodes order from (RFC 8555). Let\'s Encrypt staging: `https://acme-staging-v02.api.letsencrypt.org/directory`.', { schema: z.string().regex(/^https:\/\/[^/\s]+\S*$/, 'expected an https URL') }),
  'acme.email': string('', 'Contact address of the ACME account (expiry and policy notices from the CA); empty registers the account without one.', { schema: z.string().regex(/^$|^[^\s@]+@[^\s@]+\.[^\s@]+$/, 'expected an email address or nothing') }),
  'acme.http_port': integer(80, 'Relay node: the port of the http-01 responder (`GET /.well-known/acme-challenge/<token>`). CAs validate on port 80: forward 80 here when it is another port.', z.number().int().min(1).max(65535)),
  'acme.directory_ca_file': string('', 'Relay node: a PEM file of CA certificates trusted for the ACME directory\'s HTTPS (an internal ACME server, or Pebble\'s in tests), beside the system\'s. Empty: the system\'s alone.'),
  'acme.edge_lookups_per_client_per_minute': integer(5, 'Relay node: how many times a minute one client address (IPv6 by /64) may make the http-01 responder ask the edge for a token this node did not publish. Past it that client\'s unknown tokens are answered 404 without asking, so one client spraying made-up tokens cannot use up the 20 lookups a minute the responder makes in all and leave a CA\'s validation of another node\'s order unanswered. An answer already known, and a token this node published, cost nothing.', z.number().int().min(1).max(1000)),
  // POST /webhooks/ses (docs/ses.md). Any AWS account can point an SNS topic at this URL and SNS signs
  // its messages as it signs ours: only the topics listed here are believed.
  'ses.topic_arns': list([], 'SNS topic ARNs (`arn:aws:sns:<region>:<account>:<topic>`) whose messages `POST /webhooks/ses` accepts: their subscription is confirmed and their SES bounce, complaint and delivery notifications applied. A message from any other topic is refused with 403; empty refuses every one.', z.string().regex(/^arn:aws(-cn|-us-gov)?:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$/, 'expected an SNS topic ARN: arn:aws:sns:<region>:<account>:<topic>')),
  'ses.extra_sns_url_prefixes': list([], 'Testing and private mirrors only: URL prefixes (`http://127.0.0.1:9999/`) that `POST /webhooks/ses` trusts for `SigningCertURL` and `SubscribeURL` besides `https://sns.<region>.amazonaws.com/` (and `.amazonaws.com.cn`). Leave empty in production: a certificate fetched from a listed prefix is believed as if SNS had served it.', httpUrl.refine((s) => s !== '' && s.endsWith('/'), 'expected an http(s) URL ending in /')),
  'ses.max_notification_age': { ...duration(3_600_000, 'An SNS `Notification` posted to `POST /webhooks/ses` whose signed `Timestamp` is older than this is refused (400) as a replay and changes nothing; so is one more than 5 minutes in the future. An SNS delivery policy retries a failed delivery for at most an hour (the default one for about a minute), so a shorter window can refuse a genuine late retry. 5m to 24h.'), schema: z.number().int().min(300_000).max(86_400_000) },


  // Console browser sessions (docs/console.md).
  'console.session_idle_timeout': { ...duration(28_800_000, 'A console session unused this long is void (idle expiry: its last request plus this); `last_seen_at` moves at most once a minute. At least 1m.'), schema: z.number().int().min(60_000) },
  'console.session_max_age': { ...duration(604_800_000, 'A console session is void this long after sign-in however it is used (absolute expiry, fixed when it is opened). At least 1m.'), schema: z.number().int().min(60_000) },
  // People (docs/console.md, "Invitations", "Password reset"): mailed links, single use.
  'console.invitation_ttl': { ...duration(604_800_000, 'How long the link in an invitation mail can be accepted; once, in that time. 1h to 30d.'), schema: z.number().int().min(3_600_000).max(2_592_000_000) },
  'console.password_reset_ttl': { ...duration(3_600_000, 'How long the link in a password reset mail can be used; once, in that time. 5m to 24h.'), schema: z.number().int().min(300_000).max(86_400_000) },
  'console.mail_from': string('', 'The From of the mail the service sends itself (invitations, password resets), as `address` or `Name <address>`. Empty: `edgemail <no-reply@<host of server.public_url>>` (`localhost` when that host is an IP address). The mail is DKIM-signed when that domain is registered and verified in the system-mail project (docs/console.md).', { schema: z.string().regex(/^$|^(?:[^<>@]*<[^\s@<>]+@[^\s@<>]+\.?[^\s@<>]*>|[^\s@<>]+@[^\s@<>]+)$/, 'expected `address` or `Name <address>`') }),

  'console.events_session_check': { ...duration(5_000, 'How often an open console event stream (`GET /app/api/events`) re-checks its session: a stream whose session was signed out, expired or left the project ends within this time plus one database query. One query per project per check, whatever the number of streams. 500ms to 1m.'), schema: z.number().int().min(500).max(60_000) },

  'audit_log_retention_days': integer(90, 'Days audit events are kept; 0 keeps them forever.'),
  'audit.queue_size': integer(1000, 'Audit events an isolate holds before writing them; beyond it events are dropped and each drop logged.'),
} as const;

export type SettingName = keyof typeof settings;

/** Configuration keys that were removed: they still parse, and any set are named in the boot log. */
export const removedSettings = ['tls.mode', 'tls.cert', 'tls.key', 'tls.fqdn', 'tls.alg', 'tls.cachedir'] as const;
