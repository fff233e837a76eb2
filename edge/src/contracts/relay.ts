// Bodies of the relay-node channel (docs/relay-protocol.md).
import { z } from '@hono/zod-openapi';
import { Timestamp } from './common.js';

/** The node record is `RelayNodeSchema` of ./relay-node.ts, shared with `GET /api/v1/relay/nodes`. */

const Version = z.string().trim().min(1, 'must not be empty').max(64, 'must be at most 64 characters').openapi({ example: '0.1.0' });

export const ListenerSchema = z
  .object({
    name: z.string().min(1).max(64).openapi({ example: 'inbound' }),
    port: z.number().int().min(0).max(65535),
    tls: z.enum(['starttls', 'implicit', 'off']),
    proxy_protocol: z.boolean(),
  })
  .openapi('RelayListener');

export const NodeTlsSchema = z
  .object({
    source: z.string().max(32).openapi({ example: 'self_signed' }),
    not_after: z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp' }).nullable().optional(),
  })
  .openapi('RelayNodeTls');

export const EnrollSchema = z
  .object({
    name: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters').openapi({ example: 'mx1' }),
    version: Version.optional(),
  })
  .strict()
  .openapi('RelayEnroll');

/** PostgreSQL's `integer`. */
const INT4_MAX = 2 ** 31 - 1;

export const HeartbeatSchema = z
  .object({
    version: Version,
    listeners: z.array(ListenerSchema).max(16),
    tls: NodeTlsSchema,
    // Bounded by their columns (integer, bigint read as a number): past them the write would fail with a 500.
    spool_depth: z.number().int().min(0).max(INT4_MAX, `must be at most ${INT4_MAX}`),
    // Optional so that a node older than these fields still beats (recorded as 0).
    dead_letters: z.number().int().min(0).max(INT4_MAX, `must be at most ${INT4_MAX}`).default(0).openapi({ description: 'Messages in the node\'s `<spool>/dead/` (the edge refused them for good)' }),
    dead_letter_bytes: z.number().max(Number.MAX_SAFE_INTEGER, `must be at most ${Number.MAX_SAFE_INTEGER}`).int().min(0).default(0).openapi({ description: 'Bytes in the node\'s `<spool>/dead/`' }),
  })
  .strict()
  .openapi('RelayHeartbeat');

export const ListenerCertificateSchema = z
  .object({
    certificate: z.string().openapi({ description: 'PEM chain, leaf first' }),
    private_key: z.string().openapi({ description: 'PEM' }),
    source: z.enum(['self_signed']),
    not_after: Timestamp,
  })
  .openapi('ListenerCertificate');

const Pem = z.string().min(1, 'must not be empty').max(32_768, 'must be at most 32768 characters');

export const SelfSignedOfferSchema = z
  .object({ certificate: Pem, private_key: Pem })
  .strict()
  .openapi('SelfSignedOffer');

export const CertificateQuery = z.object({
  listener: z.string().max(64).optional().openapi({ param: { name: 'listener', in: 'query' }, example: 'inbound' }),
  name: z.string().max(253).optional().openapi({ param: { name: 'name', in: 'query' }, description: 'The SNI name of the handshake', example: 'mx.example.com' }),
});

export type EnrollInput = z.infer<typeof EnrollSchema>;
export type HeartbeatInput = z.infer<typeof HeartbeatSchema>;
