// Bodies of the relay-node channel (docs/relay-protocol.md). The contract is
// shared/src/relay-protocol/ (the node parses with it too); this file only
// names the schemas and adds examples for the OpenAPI document. `.extend()`
// keeps each shared field, checks and messages included, and swaps in a copy
// that carries the metadata; relay-protocol-agrees.ts fails the typecheck if
// the two ever differ in shape.
import { z } from '@hono/zod-openapi';
import {
  BundleCertificate,
  CertificateAnswer,
  CertificateBundle,
  CertificateQuery as SharedCertificateQuery,
  DomainsAnswer,
  EnrollAnswer,
  EnrollRequest,
  HeartbeatAnswer,
  HeartbeatBody,
  ListenerReport,
  SelfSignedOffer,
  TlsReport,
} from '@edgemail/shared';
import { arrayOf, asTimestamp } from './common.js';
import { RelayNodeSchema } from './relay-node.js';

const versionExample = { example: '0.1.0' };

export const ListenerSchema = ListenerReport
  .extend({ name: ListenerReport.shape.name.meta({ example: 'inbound' }) })
  .openapi('RelayListener');

export const NodeTlsSchema = TlsReport
  .extend({ source: TlsReport.shape.source.meta({ example: 'self_signed' }) })
  .openapi('RelayNodeTls');

export const EnrollSchema = EnrollRequest
  .extend({
    name: EnrollRequest.shape.name.meta({ example: 'mx1' }),
    version: EnrollRequest.shape.version.meta(versionExample),
  })
  .openapi('RelayEnroll');

export const HeartbeatSchema = HeartbeatBody
  .extend({
    version: HeartbeatBody.shape.version.meta(versionExample),
    listeners: arrayOf(HeartbeatBody.shape.listeners, ListenerSchema),
    tls: NodeTlsSchema,
    dead_letters: HeartbeatBody.shape.dead_letters.meta({ description: 'Messages in the node\'s `<spool>/dead/` (the edge refused them for good)' }),
    dead_letter_bytes: HeartbeatBody.shape.dead_letter_bytes.meta({ description: 'Bytes in the node\'s `<spool>/dead/`' }),
  })
  .openapi('RelayHeartbeat');

export const ListenerCertificateSchema = CertificateAnswer
  .extend({
    certificate: CertificateAnswer.shape.certificate.meta({ description: 'PEM chain, leaf first' }),
    private_key: CertificateAnswer.shape.private_key.meta({ description: 'PEM' }),
    not_after: asTimestamp(CertificateAnswer.shape.not_after),
  })
  .openapi('ListenerCertificate');

export const SelfSignedOfferSchema = SelfSignedOffer.clone().openapi('SelfSignedOffer');

export const CertificateQuery = SharedCertificateQuery.extend({
  listener: SharedCertificateQuery.shape.listener.meta({ param: { name: 'listener', in: 'query' }, example: 'inbound' }),
  name: SharedCertificateQuery.shape.name.meta({ param: { name: 'name', in: 'query' }, description: 'The SNI name of the handshake', example: 'mx.example.com' }),
});

export const BundleCertificateSchema = BundleCertificate
  .extend({
    certificate: BundleCertificate.shape.certificate.meta({ description: 'PEM: the certificate, then its chain' }),
    private_key: BundleCertificate.shape.private_key.meta({ description: 'PEM (PKCS#8)' }),
    not_after: asTimestamp(BundleCertificate.shape.not_after),
    kind: BundleCertificate.shape.kind.meta({ example: 'issued' }),
  })
  .openapi('RelayBundleCertificate');

export const CertificateBundleSchema = CertificateBundle
  .extend({
    generation: CertificateBundle.shape.generation.meta({ description: 'The TLS generation, also the ETag', example: 42 }),
    listeners: CertificateBundle.shape.listeners.meta({ description: 'Listener → the assigned certificate\'s name, or null', example: { inbound: 'mx1', submission: null } }),
    acme: CertificateBundle.shape.acme.meta({ description: 'Host → its ACME certificate\'s name', example: { 'mx1.example.net': 'acme:mx1.example.net' } }),
    self_signed: CertificateBundle.shape.self_signed.meta({ description: 'The shared self-signed pair\'s name, or null', example: 'self-signed' }),
    certificates: z.record(z.string(), BundleCertificateSchema).meta({ description: 'Name → certificate: only those named above' }),
  })
  .openapi('RelayCertificateBundle');

export const IfNoneMatchHeader = z.object({
  'if-none-match': z.string().max(256).optional().openapi({
    param: { name: 'if-none-match', in: 'header' },
    description: 'The ETag of the bundle the node holds (`"<generation>"`): unchanged, the answer is 304',
    example: '"42"',
  }),
});

export type EnrollInput = z.infer<typeof EnrollSchema>;
export type HeartbeatInput = z.infer<typeof HeartbeatSchema>;

export const EnrollAnswerSchema = EnrollAnswer.extend({
  node: RelayNodeSchema,
  token: EnrollAnswer.shape.token.meta({ example: 'myr_a1b2c3d4_…' }),
});

export const HeartbeatAnswerSchema = HeartbeatAnswer.extend({ node: RelayNodeSchema });

export const DomainsAnswerSchema = DomainsAnswer.extend({
  domains: DomainsAnswer.shape.domains.meta({ example: ['acme.test', 'globex.test'] }),
  // Optional for the node (an older edge did not send it); this edge always does.
  full: DomainsAnswer.shape.full.unwrap().meta({ example: ['globex.test'], description: 'Among `domains`, those whose project\'s inbound storage quota is reached.' }),
  inbound_rules: DomainsAnswer.shape.inbound_rules.unwrap().meta({
    example: [{ domains: ['acme.test'], rules: [{ match: { recipient: 'old-*@acme.test' }, refuse: 'This address no longer takes mail' }] }],
    description: 'Per project with a `refuse` routing rule: its domains and its rules in order up to the last refusal (`refuse`: the 550 text, null for a rule that accepts). The node refuses at RCPT or DATA from them (docs/inbound-rules.md).',
  }),
  spam_reject: DomainsAnswer.shape.spam_reject.unwrap().meta({
    example: { 'acme.test': 10 },
    description: 'Domain → the rspamd score at or above which its project refuses mail at DATA with `550 5.7.1` (`reject_score` of `PUT /api/v1/project/inbound-spam`); only domains whose project set one. A node without rspamd ignores it.',
  }),
});
