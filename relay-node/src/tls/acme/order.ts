// One ACME order for one host with acme-client (RFC 8555): the node's account
// (registered on first use, terms agreed, contact from `acme.email`), http-01
// only, a fresh ECDSA P-256 key per certificate. Each challenge is published
// (in this node's memory and at the edge, so whichever node the CA reaches
// answers) before the CA is told to validate, and removed after.
import { generateKeyPairSync } from 'node:crypto';
import * as acme from 'acme-client';

export interface IssuedCertificate {
  /** The leaf alone, PEM. */
  certificate: string;
  /** The intermediates the CA sent after it, PEM ('' when none). */
  chain: string;
  /** PKCS#8 PEM. */
  privateKey: string;
}

export interface ChallengePublisher {
  publish(host: string, token: string, keyAuthorization: string): Promise<void>;
  remove(token: string): Promise<void>;
}

export interface AcmeOrderOptions {
  directoryUrl: string;
  accountKey: string;
  /** `acme.email`; '' for none. */
  email: string;
  challenges: ChallengePublisher;
  /** First wait while polling a pending authorization or order, ms (acme-client's 5000 by default; tests shorten it). */
  pollMinMs?: number;
}

export type OrderCertificate = (host: string) => Promise<IssuedCertificate>;

export function createAcmeOrder(options: AcmeOrderOptions): OrderCertificate {
  // One client for the node's life: it keeps the account URL once registered.
  const client = new acme.Client({
    directoryUrl: options.directoryUrl,
    accountKey: options.accountKey,
    ...(options.pollMinMs !== undefined ? { backoffMin: options.pollMinMs, backoffMax: Math.max(options.pollMinMs * 4, options.pollMinMs) } : {}),
  });
  return async (host) => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    const [, csr] = await acme.crypto.createCsr({ commonName: host, altNames: [host] }, keyPem);
    const fullChain = await client.auto({
      csr,
      email: options.email || undefined,
      termsOfServiceAgreed: true,
      challengePriority: ['http-01'],
      // The CA's own request is the test: a self-check from inside the node's network proves little (balancers, split DNS).
      skipChallengeVerification: true,
      challengeCreateFn: async (_authz, challenge, keyAuthorization) => {
        if (challenge.type !== 'http-01') throw new Error(`the CA offered no http-01 challenge for ${host} (only ${challenge.type})`);
        await options.challenges.publish(host, challenge.token, keyAuthorization);
      },
      challengeRemoveFn: async (_authz, challenge) => {
        await options.challenges.remove(challenge.token);
      },
    });
    const [leaf, ...intermediates] = acme.crypto.splitPemChain(fullChain);
    if (!leaf) throw new Error(`the CA answered the order for ${host} with no certificate`);
    return { certificate: `${leaf.trim()}\n`, chain: intermediates.map((c) => `${c.trim()}\n`).join(''), privateKey: keyPem };
  };
}
