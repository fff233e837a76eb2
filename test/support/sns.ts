// Amazon SNS standing in on a loopback port, for `POST /webhooks/ses` tests:
// a test CA issues RSA signing certificates, served as `.pem` files; messages
// are signed as SNS signs them (SignatureVersion 1: SHA1withRSA, 2:
// SHA256withRSA over the canonical string, written here from the AWS
// documentation, independently of the edge's); and SubscribeURL requests are
// recorded. The edge trusts it through `ses.extra_sns_url_prefixes`.
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { generateKeyPairSync, randomBytes, randomUUID, sign, type KeyObject } from 'node:crypto';
import { certificateSerial, der, name, oid, seq, time } from './certificate.js';

const sha256WithRsa = () => seq(oid('1.2.840.113549.1.1.11'), der(0x05));

export interface SigningKey {
  /** Path of its certificate on the stand-in, `/certs/<id>.pem`. */
  path: string;
  privateKey: KeyObject;
  pem: string;
}

/** An RSA certificate for `privateKey`'s public half, issued by the CA key (self-signed when it is the same key). */
function issue(subject: string, issuer: string, key: { publicKey: KeyObject }, caKey: KeyObject, notBefore: Date, notAfter: Date): string {
  const serial = certificateSerial();
  const tbs = seq(
    der(0xa0, der(0x02, Buffer.from([2]))),
    der(0x02, serial),
    sha256WithRsa(),
    name(issuer),
    seq(time(notBefore), time(notAfter)),
    name(subject),
    key.publicKey.export({ type: 'spki', format: 'der' }),
  );
  const cert = seq(tbs, sha256WithRsa(), der(0x03, Buffer.from([0]), sign('sha256', tbs, caKey)));
  return `-----BEGIN CERTIFICATE-----\n${cert.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n?$/, '\n')}-----END CERTIFICATE-----\n`;
}

export type SnsType = 'SubscriptionConfirmation' | 'UnsubscribeConfirmation' | 'Notification';

const NOTIFICATION_FIELDS = ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'];
const CONFIRMATION_FIELDS = ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];

/** The string SNS signs: each field the type lists, present, as "Name\nvalue\n", in that order. */
export function snsStringToSign(message: Record<string, string>): string {
  const fields = message.Type === 'Notification' ? NOTIFICATION_FIELDS : CONFIRMATION_FIELDS;
  return fields.filter((f) => typeof message[f] === 'string').map((f) => `${f}\n${message[f]}\n`).join('');
}

export interface SnsStandIn {
  /** `http://127.0.0.1:<port>/`: the prefix the edge is told to trust. */
  prefix: string;
  /** A signing key with a certificate valid from an hour ago for `days`, or the given window. */
  signingKey(opts?: { notBefore?: Date; notAfter?: Date }): SigningKey;
  /** Paths of the requests it received, in order (certificate fetches and SubscribeURL calls). */
  requests(): string[];
  /**
   * A signed SNS message of `type` on `topicArn`: `fields` are added before
   * signing (a Notification's Message, a Subject); SubscribeURL points here.
   */
  message(type: SnsType, topicArn: string, fields: Record<string, string>, opts?: { key?: SigningKey; version?: '1' | '2'; certUrl?: string }): Record<string, string>;
  close(): Promise<void>;
}

export async function startSnsStandIn(): Promise<SnsStandIn> {
  const ca = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const certs = new Map<string, string>();
  const paths: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    paths.push(req.url!);
    const pem = certs.get(req.url!);
    if (pem) {
      res.writeHead(200, { 'content-type': 'application/x-pem-file' });
      res.end(pem);
    } else if (req.url!.startsWith('/confirm?')) {
      res.writeHead(200, { 'content-type': 'text/xml' });
      res.end('<ConfirmSubscriptionResponse><ConfirmSubscriptionResult><SubscriptionArn>arn</SubscriptionArn></ConfirmSubscriptionResult></ConfirmSubscriptionResponse>');
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const prefix = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

  const signingKey: SnsStandIn['signingKey'] = (opts = {}) => {
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const notBefore = opts.notBefore ?? new Date(Date.now() - 3_600_000);
    const notAfter = opts.notAfter ?? new Date(Date.now() + 30 * 86_400_000);
    const pem = issue('sns.us-east-1.amazonaws.com', 'Test SNS CA', pair, ca.privateKey, notBefore, notAfter);
    const path = `/certs/SimpleNotificationService-${randomUUID()}.pem`;
    certs.set(path, pem);
    return { path, privateKey: pair.privateKey, pem };
  };
  const defaultKey = signingKey();

  return {
    prefix,
    signingKey,
    requests: () => [...paths],
    message(type, topicArn, fields, opts = {}) {
      const key = opts.key ?? defaultKey;
      const version = opts.version ?? '1';
      const token = randomBytes(32).toString('hex');
      const message: Record<string, string> = {
        Type: type,
        MessageId: randomUUID(),
        TopicArn: topicArn,
        Message: type === 'Notification' ? '' : `You have chosen to subscribe to the topic ${topicArn}.`,
        Timestamp: new Date().toISOString(),
        ...(type === 'Notification' ? {} : { Token: token, SubscribeURL: `${prefix}confirm?Action=ConfirmSubscription&TopicArn=${encodeURIComponent(topicArn)}&Token=${token}` }),
        ...fields,
        SignatureVersion: version,
        SigningCertURL: opts.certUrl ?? `${prefix}${key.path.slice(1)}`,
      };
      message.Signature = sign(version === '1' ? 'sha1' : 'sha256', Buffer.from(snsStringToSign(message)), key.privateKey).toString('base64');
      return message;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** An SES notification as SES publishes it to SNS, about mail sent with Message-ID `messageId`. */
export function sesNotification(kind: 'Bounce' | 'Complaint' | 'Delivery', messageId: string, recipients: string[], opts: { bounceType?: 'Permanent' | 'Transient' | 'Undetermined' } = {}): string {
  const mail = {
    timestamp: new Date().toISOString(),
    source: 'news@acme.test',
    messageId: `0100018c-${randomUUID()}-000000`,
    destination: recipients,
    headersTruncated: false,
    headers: [{ name: 'Message-ID', value: messageId }, { name: 'Subject', value: 'Hello' }],
    commonHeaders: { from: ['news@acme.test'], to: recipients, messageId, subject: 'Hello' },
  };
  const body: Record<string, unknown> = { notificationType: kind, mail };
  if (kind === 'Bounce') {
    const permanent = (opts.bounceType ?? 'Permanent') === 'Permanent';
    body.bounce = {
      bounceType: opts.bounceType ?? 'Permanent',
      bounceSubType: permanent ? 'General' : 'MailboxFull',
      bouncedRecipients: recipients.map((emailAddress) => ({
        emailAddress, action: 'failed', status: permanent ? '5.1.1' : '4.2.2',
        diagnosticCode: permanent ? 'smtp; 550 5.1.1 user unknown' : 'smtp; 452 4.2.2 mailbox full',
      })),
      timestamp: new Date().toISOString(),
      feedbackId: `0100018c-${randomUUID()}`,
      remoteMtaIp: '192.0.2.25',
      reportingMTA: 'dsn; a8-1.smtp-out.amazonses.com',
    };
  } else if (kind === 'Complaint') {
    body.complaint = {
      complainedRecipients: recipients.map((emailAddress) => ({ emailAddress })),
      timestamp: new Date().toISOString(),
      feedbackId: `0100018c-${randomUUID()}`,
      complaintFeedbackType: 'abuse',
    };
  } else {
    body.delivery = {
      timestamp: new Date().toISOString(), processingTimeMillis: 512, recipients,
      smtpResponse: '250 2.6.0 Message received', reportingMTA: 'a8-70.smtp-out.amazonses.com',
    };
  }
  return JSON.stringify(body);
}
