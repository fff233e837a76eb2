// Fails `pnpm typecheck` when the edge's annotated relay schemas and the
// shared contract (shared/src/relay-protocol/) stop agreeing: what the edge
// takes and answers must be what the node sends and reads. Each line compares
// the input and the output type of an edge schema with the shared one's.
// Types only: nothing here runs.
import type { z } from '@hono/zod-openapi';
import type * as shared from '@edgemail/shared';
import type * as relay from './relay.js';
import type * as acme from './relay-acme.js';
import type * as relayNode from './relay-node.js';
import type * as inbound from './inbound-meta.js';
import type * as outbound from './relay-outbound.js';
import type * as submission from './relay-submission.js';

/** Exactly the same type (not merely assignable either way). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
type Same<Edge extends z.ZodType, Shared extends z.ZodType> = Equal<z.input<Edge>, z.input<Shared>> extends true
  ? Equal<z.output<Edge>, z.output<Shared>>
  : false;
type Holds<T extends true> = T;

export type RelayProtocolAgrees = [
  Holds<Same<typeof relay.EnrollSchema, typeof shared.EnrollRequest>>,
  Holds<Same<typeof relay.EnrollAnswerSchema, typeof shared.EnrollAnswer>>,
  Holds<Same<typeof relay.HeartbeatSchema, typeof shared.HeartbeatBody>>,
  Holds<Same<typeof relay.HeartbeatAnswerSchema, typeof shared.HeartbeatAnswer>>,
  Holds<Same<typeof relay.ListenerSchema, typeof shared.ListenerReport>>,
  Holds<Same<typeof relay.NodeTlsSchema, typeof shared.TlsReport>>,
  Holds<Same<typeof relayNode.RelayNodeSchema, typeof shared.NodeRecord>>,
  // The one deliberate difference: `full` and `spam_reject` are optional for the node (an older edge did not send them), always sent here.
  Holds<Equal<z.input<typeof relay.DomainsAnswerSchema>, Required<z.input<typeof shared.DomainsAnswer>>>>,
  Holds<Equal<z.output<typeof relay.DomainsAnswerSchema>, Required<z.output<typeof shared.DomainsAnswer>>>>,
  Holds<Same<typeof relay.CertificateQuery, typeof shared.CertificateQuery>>,
  Holds<Same<typeof relay.ListenerCertificateSchema, typeof shared.CertificateAnswer>>,
  Holds<Same<typeof relay.SelfSignedOfferSchema, typeof shared.SelfSignedOffer>>,
  Holds<Same<typeof acme.AcmeLeaseSchema, typeof shared.AcmeLeaseRequest>>,
  Holds<Same<typeof acme.AcmeLeaseAnswerSchema, typeof shared.AcmeLeaseAnswer>>,
  Holds<Same<typeof acme.AcmeFailureSchema, typeof shared.AcmeFailureRequest>>,
  Holds<Same<typeof acme.AcmeFailureAnswerSchema, typeof shared.AcmeFailureAnswer>>,
  Holds<Same<typeof acme.AcmeChallengeSchema, typeof shared.AcmeChallengeRequest>>,
  Holds<Same<typeof acme.AcmeChallengeAnswerSchema, typeof shared.AcmeChallengeAnswer>>,
  Holds<Same<typeof acme.AcmeChallengeRemovedSchema, typeof shared.AcmeChallengeRemoved>>,
  Holds<Same<typeof acme.AcmeCertificateSchema, typeof shared.AcmeCertificateRequest>>,
  Holds<Same<typeof acme.AcmeCertificateAnswerSchema, typeof shared.AcmeCertificateAnswer>>,
  Holds<Same<typeof relay.CertificateBundleSchema, typeof shared.CertificateBundle>>,
  Holds<Same<typeof inbound.InboundMetaSchema, typeof shared.InboundMeta>>,
  Holds<Same<typeof inbound.InboundForwardedSchema, typeof shared.ForwardAnswer>>,
  Holds<Same<typeof outbound.ClaimSchema, typeof shared.OutboundClaim>>,
  Holds<Same<typeof outbound.ClaimAnswerSchema, typeof shared.OutboundClaimAnswer>>,
  Holds<Same<typeof outbound.OutboundJobSchema, typeof shared.OutboundJob>>,
  Holds<Same<typeof outbound.OutboundResultSchema, typeof shared.OutboundResult>>,
  Holds<Same<typeof outbound.ResultsSchema, typeof shared.OutboundResults>>,
  Holds<Same<typeof outbound.ResultsAnswerSchema, typeof shared.OutboundResultsAnswer>>,
  Holds<Same<typeof submission.SubmissionAuthSchema, typeof shared.SubmissionAuthRequest>>,
  Holds<Same<typeof submission.SubmissionAuthAnswerSchema, typeof shared.SubmissionAuthAnswer>>,
  Holds<Same<typeof submission.SubmissionSchema, typeof shared.SubmissionRequest>>,
  Holds<Same<typeof submission.SubmissionAnswerSchema, typeof shared.SubmissionAnswer>>,
  Holds<Same<typeof submission.SubmissionLeaseAnswerSchema, typeof shared.SubmissionLeaseAnswer>>,
  Holds<Same<typeof submission.SubmissionBatchSchema, typeof shared.SubmissionBatchRequest>>,
  Holds<Same<typeof submission.SubmissionBatchAnswerSchema, typeof shared.SubmissionBatchAnswer>>,
];
