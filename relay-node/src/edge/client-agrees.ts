// Fails `pnpm typecheck` when the edge client stops speaking the shared
// contract (shared/src/relay-protocol/): each method must send the request
// type and return the answer type of the schema it is parsed with, not a
// hand-written look-alike. Types only: nothing here runs.
import type {
  AcmeCertificateAnswer,
  AcmeCertificateRequest,
  AcmeChallengeAnswer,
  AcmeChallengeRemoved,
  AcmeChallengeRequest,
  AcmeFailureAnswer,
  AcmeLeaseAnswer,
  CertificateAnswer,
  CertificateBundle,
  DomainsAnswer,
  EnrollAnswer,
  EnrollRequest,
  ForwardAnswer,
  ForwardBatchAnswer,
  HeartbeatAnswer,
  HeartbeatBody,
  InboundMeta,
  OutboundClaimReading,
  OutboundLeaseRef,
  OutboundRenewAnswer,
  OutboundResult,
  OutboundResultsAnswer,
  SelfSignedOffer,
  SubmissionAnswer,
  SubmissionAuthAnswer,
  SubmissionAuthRequest,
  SubmissionRequest,
} from '@edgemail/shared';
import type { EdgeClient } from './client.js';

/** Exactly the same type (not merely assignable either way). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
type Holds<T extends true> = T;
type Answer<M extends keyof EdgeClient> = EdgeClient[M] extends (...args: never[]) => Promise<infer A> ? A : never;
type Sends<M extends keyof EdgeClient, I extends number> = EdgeClient[M] extends (...args: infer P) => unknown ? P[I] : never;

export type EdgeClientAgrees = [
  Holds<Equal<Answer<'enroll'>, EnrollAnswer>>,
  Holds<Equal<Sends<'enroll', 1>, EnrollRequest>>,
  Holds<Equal<Answer<'heartbeat'>, HeartbeatAnswer>>,
  Holds<Equal<Sends<'heartbeat', 0>, HeartbeatBody>>,
  Holds<Equal<Answer<'domains'>, DomainsAnswer>>,
  Holds<Equal<Answer<'certificate'>, CertificateAnswer | null>>,
  Holds<Equal<Answer<'certificates'>, CertificateBundle | null>>,
  Holds<Equal<Answer<'offerSelfSigned'>, CertificateAnswer>>,
  Holds<Equal<Sends<'offerSelfSigned', 0>, SelfSignedOffer>>,
  Holds<Equal<Answer<'acmeLease'>, AcmeLeaseAnswer>>,
  Holds<Equal<Answer<'reportAcmeFailure'>, AcmeFailureAnswer>>,
  Holds<Equal<Answer<'publishAcmeChallenge'>, AcmeChallengeAnswer>>,
  Holds<Equal<Sends<'publishAcmeChallenge', 0>, AcmeChallengeRequest>>,
  Holds<Equal<Answer<'acmeChallenge'>, AcmeChallengeAnswer | null>>,
  Holds<Equal<Answer<'removeAcmeChallenge'>, AcmeChallengeRemoved>>,
  Holds<Equal<Answer<'storeAcmeCertificate'>, AcmeCertificateAnswer>>,
  Holds<Equal<Sends<'storeAcmeCertificate', 0>, AcmeCertificateRequest>>,
  Holds<Equal<Answer<'forwardInbound'>, ForwardAnswer>>,
  Holds<Equal<Sends<'forwardInbound', 0>['meta'], InboundMeta>>,
  Holds<Equal<Answer<'forwardInboundBatch'>, ForwardBatchAnswer>>,
  Holds<Equal<Sends<'forwardInboundBatch', 0>[number]['meta'], InboundMeta>>,
  Holds<Equal<Answer<'claimOutbound'>, OutboundClaimReading>>,
  Holds<Equal<Answer<'reportOutbound'>, OutboundResultsAnswer>>,
  Holds<Equal<Sends<'reportOutbound', 0>, OutboundResult[]>>,
  Holds<Equal<Answer<'renewOutbound'>, OutboundRenewAnswer>>,
  Holds<Equal<Sends<'renewOutbound', 0>, OutboundLeaseRef[]>>,
  Holds<Equal<Answer<'checkSubmissionKey'>, SubmissionAuthAnswer>>,
  Holds<Equal<Sends<'checkSubmissionKey', 0>, SubmissionAuthRequest>>,
  Holds<Equal<Answer<'submitMessage'>, SubmissionAnswer>>,
  Holds<Equal<Sends<'submitMessage', 0>, SubmissionRequest>>,
];
