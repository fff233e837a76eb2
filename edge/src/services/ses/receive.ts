// One SNS message posted to `POST /webhooks/ses` (docs/ses.md), checked in
// this order, each refusal changing nothing: the JSON and its fields, the
// `x-amz-sns-message-type` header against `Type`, the SigningCertURL
// allowlist, the signature, the topic allowlist, a Notification's age
// (freshness.ts); then the message is acted on.
import type { Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { SNS_MESSAGE_TYPES, SnsMessageSchema, type SesWebhookResult, type SnsMessage } from '../../contracts/ses.js';
import { forbidden, invalid, unauthorized } from '../errors.js';
import { applySesNotification } from './apply-notification.js';
import { confirmSubscription } from './confirm-subscription.js';
import { assertFresh } from './freshness.js';
import { readSesNotification } from './ses-notification.js';
import { signatureProblem } from './sns-signature.js';
import { snsUrl } from './sns-urls.js';
import { signingCertificate } from './signing-certificates.js';
import type { OutboxRows } from '../emails/events.js';

export interface Received {
  result: SesWebhookResult;
  /** Outbox rows written, by project, for `handOverOutbox`. */
  events: Map<string, OutboxRows>;
}

type SesConfig = Pick<Config, 'ses.topic_arns' | 'ses.extra_sns_url_prefixes' | 'ses.max_notification_age'>;

export async function receiveSnsMessage(db: Db, config: SesConfig, body: string, typeHeader: string | undefined): Promise<Received> {
  const message = parse(body);
  if (typeHeader !== message.Type) {
    throw invalid(`x-amz-sns-message-type ${typeHeader === undefined ? 'is missing' : `"${typeHeader.slice(0, 40)}"`} but the body's Type is ${message.Type}`);
  }
  await verify(message, config);
  if (!config['ses.topic_arns'].includes(message.TopicArn)) {
    throw forbidden(`topic ${message.TopicArn} is not in ses.topic_arns`);
  }
  const none = new Map<string, OutboxRows>();
  switch (message.Type) {
    case 'SubscriptionConfirmation': {
      const target = snsUrl(message.SubscribeURL, 'SubscribeURL', config['ses.extra_sns_url_prefixes']);
      if ('problem' in target) throw invalid(target.problem);
      await confirmSubscription(target.url);
      return { result: { outcome: 'confirmed' }, events: none };
    }
    case 'UnsubscribeConfirmation':
      // Not resubscribed: whoever unsubscribed meant it; subscribing again is a change in SNS.
      return { result: { outcome: 'acknowledged' }, events: none };
    case 'Notification': {
      assertFresh(message.Timestamp, config);
      const reading = readSesNotification(message.Message);
      if (reading.kind === 'ignored') return { result: { outcome: 'ignored', reason: reading.reason }, events: none };
      const applied = await applySesNotification(db, message.MessageId, reading);
      return { result: { outcome: 'applied', recipients: applied.recipients }, events: applied.events };
    }
  }
}

function parse(body: string): SnsMessage {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw invalid('malformed JSON body');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw invalid('the body must be an SNS message (a JSON object)');
  const type = (json as { Type?: unknown }).Type;
  if (typeof type === 'string' && !(SNS_MESSAGE_TYPES as readonly string[]).includes(type)) {
    throw invalid(`unknown SNS message type "${type.slice(0, 40)}"`, { Type: `must be one of ${SNS_MESSAGE_TYPES.join(', ')}` });
  }
  const parsed = SnsMessageSchema.safeParse(json);
  if (parsed.success) return parsed.data;
  const fields = Object.fromEntries(parsed.error.issues.map((i) => [i.path.join('.') || 'body', i.message]));
  throw invalid('not an SNS message', fields);
}

async function verify(message: SnsMessage, config: SesConfig): Promise<void> {
  const certUrl = snsUrl(message.SigningCertURL, 'SigningCertURL', config['ses.extra_sns_url_prefixes']);
  if ('problem' in certUrl) throw invalid(certUrl.problem);
  const problem = await signatureProblem(message, await signingCertificate(certUrl.url));
  if (problem) throw unauthorized(problem);
}
