import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startSnsStandIn, snsStringToSign, type SnsStandIn } from '../../../../test/support/sns.js';
import { certificatePublicKeyInfo, certificateValidity, pemBlocks } from '../../crypto/pem.js';
import { SnsMessageSchema } from '../../contracts/ses.js';
import { canonicalString, signatureProblem } from './sns-signature.js';
import type { SigningCertificate } from './signing-certificates.js';

const TOPIC = 'arn:aws:sns:us-east-1:123456789012:ses-events';
let sns: SnsStandIn;
beforeAll(async () => { sns = await startSnsStandIn(); });
afterAll(async () => { await sns?.close(); });

function certificateOf(pem: string): SigningCertificate {
  const der = pemBlocks(pem)[0]!.der;
  return { spki: Uint8Array.from(certificatePublicKeyInfo(der)), ...certificateValidity(der), fetchedAt: Date.now() };
}

// The field order of docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html.
test('the canonical string of a Notification: Subject only when present, in AWS order', () => {
  const base = { Type: 'Notification', MessageId: 'm', TopicArn: TOPIC, Message: 'hi', Timestamp: '2026-01-01T00:00:00.000Z', SignatureVersion: '1', Signature: 'x', SigningCertURL: 'u' } as const;
  expect(canonicalString(SnsMessageSchema.parse(base))).toBe(`Message\nhi\nMessageId\nm\nTimestamp\n2026-01-01T00:00:00.000Z\nTopicArn\n${TOPIC}\nType\nNotification\n`);
  expect(canonicalString(SnsMessageSchema.parse({ ...base, Subject: 's' }))).toBe(`Message\nhi\nMessageId\nm\nSubject\ns\nTimestamp\n2026-01-01T00:00:00.000Z\nTopicArn\n${TOPIC}\nType\nNotification\n`);
});

describe('signatureProblem', () => {
  test.each(['1', '2'] as const)('SignatureVersion %s verifies, for each type', async (version) => {
    const key = sns.signingKey();
    for (const type of ['Notification', 'SubscriptionConfirmation', 'UnsubscribeConfirmation'] as const) {
      const message = sns.message(type, TOPIC, type === 'Notification' ? { Message: '{"x":1}', Subject: 'S' } : {}, { key, version });
      expect(canonicalString(SnsMessageSchema.parse(message))).toBe(snsStringToSign(message));
      expect(await signatureProblem(SnsMessageSchema.parse(message), certificateOf(key.pem))).toBeNull();
    }
  });

  test('a tampered field, another key, a wrong version or an expired certificate fails, naming why', async () => {
    const key = sns.signingKey();
    const message = SnsMessageSchema.parse(sns.message('Notification', TOPIC, { Message: '{"x":1}' }, { key, version: '2' }));
    const cert = certificateOf(key.pem);
    expect(await signatureProblem({ ...message, Message: '{"x":2}' }, cert)).toBe('the SNS signature does not verify');
    expect(await signatureProblem(message, certificateOf(sns.signingKey().pem))).toBe('the SNS signature does not verify');
    expect(await signatureProblem({ ...message, SignatureVersion: '1' }, cert)).toBe('the SNS signature does not verify');
    expect(await signatureProblem({ ...message, Signature: '***' }, cert)).toBe('Signature is not base64');
    const expired = certificateOf(sns.signingKey({ notBefore: new Date(Date.now() - 2 * 86_400_000), notAfter: new Date(Date.now() - 86_400_000) }).pem);
    expect(await signatureProblem(message, expired)).toMatch(/^the signing certificate expired on /);
  });
});
