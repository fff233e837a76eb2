// The SMTP listeners of the relay nodes as the admin routes and `edgemail tls
// status` show them: TLS on or off, the certificate assigned, what a handshake
// is answered with, and what the nodes last reported (docs/listeners.md).
import { z } from '@hono/zod-openapi';
import { TLS_LISTENERS } from '@edgemail/schema';
import { Timestamp } from './common.js';

export const ListenerParams = z.object({
  listener: z.string().max(64).openapi({ param: { name: 'listener', in: 'path' }, example: 'inbound', description: `One of ${TLS_LISTENERS.join(', ')}` }),
});

export const AssignCertificateSchema = z.object({
  certificate: z.string({ error: (issue) => (issue.input === undefined ? 'required' : 'must be a string') })
    .min(1, 'must not be empty').max(200, 'must be at most 200 characters')
    .openapi({ example: 'mx1', description: 'The name of a stored certificate (not an authority, not expired)' }),
}).strict().openapi('AssignCertificate');

export const PRESENTS = ['assigned', 'acme', 'self_signed', 'none'] as const;
export type Presents = (typeof PRESENTS)[number];

export const AssignedCertificateSchema = z.object({
  name: z.string().openapi({ example: 'mx1' }),
  kind: z.enum(['self_signed', 'uploaded', 'authority', 'issued', 'acme']),
  hosts: z.array(z.string()).openapi({ example: ['mx1.example.net'] }),
  not_after: Timestamp,
}).openapi('AssignedCertificate');

export const ListenerNodeReportSchema = z.object({
  node_id: z.string().openapi({ format: 'uuid' }),
  name: z.string().openapi({ example: 'mx1' }),
  last_heartbeat_at: Timestamp.nullable(),
  listener: z.unknown().openapi({ description: 'This listener\'s entry in the node\'s last heartbeat (`listeners[]`), as the node sent it; null when the node did not report it' }),
  tls: z.unknown().openapi({ description: 'What the node reported presenting on this listener (the listener entry\'s `certificate`, null when it has none, as with TLS off; from a node older than per-listener reports, its one `tls` report), as the node sent it' }),
  generation: z.number().int().nullable().openapi({ description: 'The certificate generation the node holds (its heartbeat\'s `tls.generation`); equal to the listener\'s `generation` once it has caught up. Null when the node did not report one' }),
}).openapi('ListenerNodeReport');

export const ListenerSchema = z.object({
  name: z.enum(TLS_LISTENERS),
  tls: z.enum(['on', 'off']).openapi({ description: '`relay_node.inbound.tls.enabled` (inbound) or `submission.tls.enabled` (submission). Off: an assignment is kept and shown, nothing is presented' }),
  certificate: AssignedCertificateSchema.nullable().openapi({ description: 'The certificate assigned to the listener, null when none is' }),
  presents: z.enum(PRESENTS).openapi({
    description: 'What a TLS handshake is answered with: `assigned` (the certificate above), `acme` (for an SNI name in `acme_hosts` the ACME certificate, for any other name the self-signed pair), `self_signed` (the shared self-signed pair), `none` (TLS off)',
  }),
  acme_hosts: z.array(z.string()).openapi({ description: 'The names ACME answers for on this listener (`acme.hosts` when `acme.enabled` and nothing is assigned); empty otherwise' }),
  generation: z.number().int().openapi({ description: 'The current certificate generation (`tls_state.generation`), moved by every change of a certificate or an assignment; relay nodes poll it' }),
  nodes: z.array(ListenerNodeReportSchema).openapi({ description: 'Every enrolled installation-wide relay node (not revoked), with what it last reported for this listener' }),
}).openapi('Listener');

export type ListenerRecord = z.infer<typeof ListenerSchema>;
export type ListenerNodeReport = z.infer<typeof ListenerNodeReportSchema>;
