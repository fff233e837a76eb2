// Test-only: outbound jobs as the edge hands them out, and DKIM keys of both kinds.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import type { OutboundDkim, OutboundJob } from '@edgemail/shared';

/** A job for `to` via its domain's MX, a minute of lease left; `overrides` replace top-level fields. */
export function makeJob(to: string, overrides: Partial<Omit<OutboundJob, 'message'>> & { message?: Partial<OutboundJob['message']> } = {}): OutboundJob {
  const id = randomUUID();
  const { message, ...rest } = overrides;
  return {
    email_id: id,
    attempt: 1,
    lease_until: new Date(Date.now() + 5 * 60_000).toISOString(),
    envelope: { from: 'news@acme.test', to },
    message: {
      message_id: `<${id}@acme.test>`,
      date: '2026-11-26T02:00:00.000Z',
      from: 'Acme <news@acme.test>',
      to: [to],
      cc: [],
      reply_to: [],
      subject: `hello ${id}`,
      text: 'Hello there.',
      html: null,
      headers: {},
      attachments: [],
      ...message,
    },
    dkim: null,
    route: { kind: 'mx', domain: to.split('@')[1]! },
    ...rest,
  };
}

export interface TestDkimKey {
  dkim: OutboundDkim;
  /** The TXT record to publish under `name`. */
  record: string;
  name: string;
}

/** A fresh key: RSA 2048 (SPKI in p=) or Ed25519 (the raw 32-byte key in p=, RFC 8463). */
export function makeDkimKey(algorithm: 'rsa' | 'ed25519', domain = 'acme.test', selector = `em${algorithm}`): TestDkimKey {
  const pair = algorithm === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ed25519');
  const spki = pair.publicKey.export({ type: 'spki', format: 'der' });
  const p = algorithm === 'rsa' ? spki.toString('base64') : spki.subarray(spki.length - 32).toString('base64');
  return {
    dkim: { domain, selector, algorithm, private_key_pem: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() },
    record: `v=DKIM1; k=${algorithm}; p=${p}`,
    name: `${selector}._domainkey.${domain}`,
  };
}
