// Bodies of the submission relay routes (docs/submission.md). The contract is
// shared/src/relay-protocol/submission.ts (the node parses with it too); this
// file only names the schemas and adds descriptions for the OpenAPI document.
import {
  SUBMISSION_MAX_RECIPIENTS,
  SubmissionAnswer,
  SubmissionAuthAnswer,
  SubmissionAuthRequest,
  SubmissionBatchAnswer,
  SubmissionBatchRequest,
  SubmissionLeaseAnswer,
  SubmissionRequest,
} from '@edgemail/shared';
import { MAX_RECIPIENTS } from './send.js';

/** The node refuses RCPT past the send route's maximum: both are the literal 50, or this fails the typecheck. */
export const SAME_RECIPIENT_MAXIMUM: typeof MAX_RECIPIENTS = SUBMISSION_MAX_RECIPIENTS;

export const SubmissionAuthSchema = SubmissionAuthRequest
  .extend({
    token: SubmissionAuthRequest.shape.token.meta({ description: 'The AUTH password the client gave: a project API key (`myk_…`)' }),
    client_address: SubmissionAuthRequest.shape.client_address.meta({ description: 'The client\'s address (the PROXY header\'s behind a trusted balancer): the key\'s `allowed_ips` are checked against it', example: '203.0.113.7' }),
  })
  .openapi('SubmissionAuth');

export const SubmissionAuthAnswerSchema = SubmissionAuthAnswer.clone()
  .openapi('SubmissionAuthAnswer', { description: '`ok: true` with the key\'s project and sandbox flag, or `ok: false` with why (the node answers `535 5.7.8`)' });

export const SubmissionSchema = SubmissionRequest
  .extend({
    spool_id: SubmissionRequest.shape.spool_id.meta({ description: 'The node\'s spool id: the same id again answers as the first time and writes nothing' }),
    token: SubmissionRequest.shape.token.meta({ description: 'The key the session authenticated with; judged again (a key revoked since AUTH is refused)' }),
    message_id: SubmissionRequest.shape.message_id.meta({ description: 'The message\'s `Message-ID` header as the client wrote it (absent without one). With the project and the envelope (`mail_from`, the sorted `rcpt_to`) it is the submission\'s idempotency key for 24 hours: the same again, as a client sends it after a lost 250, answers as the first time and sends nothing twice; with other content it is refused `554 5.6.0`' }),
    date: SubmissionRequest.shape.date.meta({ description: 'The message\'s `Date` header as the client wrote it (absent without one). Kept on the sent message when it parses as an RFC 5322 date-time, as a valid `message_id` (`<left@right>`) is kept as its `Message-ID`; either is written anew when missing or malformed' }),
  })
  .openapi('Submission');

export const SubmissionAnswerSchema = SubmissionAnswer.clone()
  .openapi('SubmissionAnswer', { description: '`accepted: true` once the rows are committed, else the SMTP reply the refusal is (`code`, `text` starting with the enhanced status code)' });

/** The header of `POST /relay/v1/submission/batch` naming how many messages its body holds. */
export const SUBMISSION_BATCH_COUNT_HEADER = 'x-edgemail-messages';

export const SubmissionLeaseAnswerSchema = SubmissionLeaseAnswer.clone()
  .openapi('SubmissionLeaseAnswer', { description: '`ok: true` with the key\'s project, sandbox flag, the project\'s verified sending domains, the recipients its plan still allows (`remaining`, null: unlimited) and how long the node may answer from it (`ttl_ms`); or `ok: false` with why the key may not submit (as `POST /relay/v1/submission/auth` answers)' });

export const SubmissionBatchSchema = SubmissionBatchRequest.clone()
  .openapi('SubmissionBatch', { description: 'Messages the node answered 250 for, each with the id its 250 named' });

export const SubmissionBatchAnswerSchema = SubmissionBatchAnswer.clone()
  .openapi('SubmissionBatchAnswer', { description: 'One result per message, in order: `sent`, `replayed` (already in the log: nothing written) or `failed` (recorded failed with `reason`)' });
