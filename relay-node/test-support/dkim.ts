// DKIM keys and signatures for tests: a fresh RSA key, its DNS record, and
// a message signed with it by mailauth.
import { generateKeyPairSync } from 'node:crypto';
import { dkimSign, type DKIMSignOptions } from 'mailauth';

export interface DkimKey {
  domain: string;
  selector: string;
  privateKey: string;
  /** The TXT record to publish under `<selector>._domainkey.<domain>`. */
  record: string;
  /** The name to publish it under. */
  recordName: string;
}

/** A 2048-bit RSA key for `domain` and `selector`. */
export function generateDkimKey(domain: string, selector = 'sel'): DkimKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const spki = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  return {
    domain,
    selector,
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    record: `v=DKIM1; k=rsa; p=${spki}`,
    recordName: `${selector}._domainkey.${domain}`,
  };
}

/** `message` with a DKIM-Signature by `key` in front. */
export async function signMessage(message: string | Buffer, key: DkimKey): Promise<Buffer> {
  // mailauth's signer reads its keys from signatureData; its typings ask for the top-level fields too.
  // signTime must be given: without it mailauth 4.13.3 reads the clock twice (once for the signed
  // header, once for the written one) and about one signature in 500 carries a t= it did not sign.
  const options = {
    signTime: new Date(),
    signatureData: [{ signingDomain: key.domain, selector: key.selector, privateKey: key.privateKey }],
  } as unknown as DKIMSignOptions;
  const { signatures, errors } = await dkimSign(message, options);
  if (errors.length) throw errors[0];
  return Buffer.concat([Buffer.from(signatures), Buffer.from(message)]);
}
