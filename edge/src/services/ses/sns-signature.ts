// The SNS message signature (docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html):
// SignatureVersion 1 is SHA1withRSA, 2 SHA256withRSA, over the canonical
// string of the message type's fields, in the order AWS lists them, each as
// "Name\nvalue\n"; a Notification's Subject only when present.
import { fromBase64 } from '@edgemail/shared';
import type { SnsMessage } from '../../contracts/ses.js';
import type { SigningCertificate } from './signing-certificates.js';

const NOTIFICATION_FIELDS = ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'] as const;
const CONFIRMATION_FIELDS = ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'] as const;

/** The bytes SNS signed for `message`. */
export function canonicalString(message: SnsMessage): string {
  const fields = message.Type === 'Notification' ? NOTIFICATION_FIELDS : CONFIRMATION_FIELDS;
  const values = message as unknown as Record<string, unknown>;
  let out = '';
  for (const name of fields) {
    const value = values[name];
    if (typeof value === 'string') out += `${name}\n${value}\n`;
  }
  return out;
}

/** The problem with the signature, or null when it verifies with the certificate (which must be valid now). */
export async function signatureProblem(message: SnsMessage, certificate: SigningCertificate, now = Date.now()): Promise<string | null> {
  if (now > certificate.notAfter.getTime()) return `the signing certificate expired on ${certificate.notAfter.toISOString()}`;
  if (now < certificate.notBefore.getTime()) return `the signing certificate is not valid before ${certificate.notBefore.toISOString()}`;
  let signature: Uint8Array<ArrayBuffer>;
  try {
    signature = fromBase64(message.Signature);
  } catch {
    return 'Signature is not base64';
  }
  const hash = message.SignatureVersion === '1' ? 'SHA-1' : 'SHA-256';
  let key: CryptoKey;
  try {
    key = await crypto.subtle.importKey('spki', certificate.spki, { name: 'RSASSA-PKCS1-v1_5', hash }, false, ['verify']);
  } catch {
    return 'the signing certificate does not hold an RSA key';
  }
  const ok = await crypto.subtle.verify('RSASSA-PKCS1-v1_5', key, signature, new TextEncoder().encode(canonicalString(message)));
  return ok ? null : 'the SNS signature does not verify';
}
