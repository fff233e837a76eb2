import { dkimSelector, generateDkimKeyPair, type DkimAlgorithm } from '../../crypto/dkim-keys.js';
import { seal } from '../../crypto/seal.js';

/** The seal context of `domains.dkim_private_key_sealed`: a value sealed for another column does not open here. */
export const DKIM_SEAL_CONTEXT = 'domains.dkim_private_key';

/**
 * The DKIM columns of a domain with a fresh key pair: the private half sealed,
 * the selector dated by the key's month (`em202611`).
 */
export async function newDomainKey(encryptionKey: string, algorithm: DkimAlgorithm = 'rsa', at = new Date()) {
  const pair = await generateDkimKeyPair(algorithm);
  return {
    dkimSelector: dkimSelector(at),
    dkimAlgorithm: algorithm,
    dkimPrivateKeySealed: await seal(pair.privateKeyPem, encryptionKey, DKIM_SEAL_CONTEXT),
    dkimPublicKey: pair.publicKey,
  };
}
