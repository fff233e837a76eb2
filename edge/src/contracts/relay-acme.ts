// Bodies of the ACME relay routes (docs/acme.md). The contract is
// shared/src/relay-protocol/acme.ts (the node parses with it too); this file
// only names the schemas and adds examples for the OpenAPI document.
import { z } from '@hono/zod-openapi';
import {
  AcmeCertificateAnswer,
  AcmeCertificateRequest,
  AcmeChallengeAnswer,
  AcmeChallengeRemoved,
  AcmeChallengeRequest,
  AcmeFailureAnswer,
  AcmeFailureRequest,
  AcmeLeaseAnswer,
  AcmeLeaseRequest,
  AcmeToken,
} from '@edgemail/shared';

const host = { example: 'mx1.example.net' };

export const AcmeLeaseSchema = AcmeLeaseRequest
  .extend({ host: AcmeLeaseRequest.shape.host.meta(host) })
  .openapi('AcmeLease');

export const AcmeLeaseAnswerSchema = AcmeLeaseAnswer.clone()
  .openapi('AcmeLeaseAnswer', { description: '`granted: true`: this node orders now and holds the host until `expires_at`. Otherwise `reason`: `not_due` (the stored certificate has more than 30 days left) or `held` (another node is ordering, until `expires_at`, or a failure holds the host back until then)' });

export const AcmeFailureSchema = AcmeFailureRequest
  .extend({
    host: AcmeFailureRequest.shape.host.meta(host),
    error: AcmeFailureRequest.shape.error.meta({ description: 'What failed, with the CA\'s problem detail', example: 'urn:ietf:params:acme:error:connection: Connection refused' }),
  })
  .openapi('AcmeFailure');

export const AcmeFailureAnswerSchema = AcmeFailureAnswer.clone().openapi('AcmeFailureAnswer');

export const AcmeChallengeSchema = AcmeChallengeRequest
  .extend({ host: AcmeChallengeRequest.shape.host.meta(host) })
  .openapi('AcmeChallenge');

export const AcmeChallengeAnswerSchema = AcmeChallengeAnswer.clone().openapi('AcmeChallengeAnswer');

export const AcmeChallengeRemovedSchema = AcmeChallengeRemoved.clone().openapi('AcmeChallengeRemoved');

export const AcmeTokenParam = z.object({
  token: AcmeToken.meta({ param: { name: 'token', in: 'path' }, example: 'LoqXcYV8q5ONbJQxbmR7SCTNo3tiAXDfowyjxAjEuX0' }),
});

export const AcmeCertificateSchema = AcmeCertificateRequest
  .extend({ host: AcmeCertificateRequest.shape.host.meta(host) })
  .openapi('AcmeCertificate');

export const AcmeCertificateAnswerSchema = AcmeCertificateAnswer.clone().openapi('AcmeCertificateStored');
