// Storing what an ACME order issued (docs/acme.md): checked like any pair
// (inspect.ts: readable, the key matches, the chain chains), then for ACME
// itself: it names the host and is valid now. The row `acme:<host>` (kind
// `acme`, intermediates in chain_pem, private key sealed) is written and the
// node's lease released in one statement, and only while that lease is live
// and the node's own: past its expiry another node may have been granted the
// host and be ordering, and a node that stalled past its lease must not
// overwrite what that one stores. The certificates trigger bumps
// tls_state.generation, so every node's next poll picks it up.
import { sql } from 'drizzle-orm';
import { acmeCertificateName, type AcmeCertificateAnswer, type AcmeCertificateRequest, type Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { seal } from '../../crypto/seal.js';
import { conflict, invalid } from '../errors.js';
import { assertAcmeHost } from './acme-leases.js';
import { inspectPair } from './inspect.js';
import { PRIVATE_KEY_CONTEXT } from './self-signed.js';

const refuse = (field: string, problem: string) => invalid(`invalid request body: ${field}: ${problem}`, { [field]: problem });

export async function storeAcmeCertificate(
  db: Db, config: Config, nodeId: string, input: AcmeCertificateRequest, now = new Date(),
): Promise<AcmeCertificateAnswer> {
  const { host } = input;
  assertAcmeHost(config, host);
  const pair = await inspectPair({ certificate: input.certificate, privateKey: input.private_key, chain: input.chain || undefined });
  if (!pair.ok) {
    const [field, problem] = Object.entries(pair.fields)[0]!;
    throw invalid(`invalid request body: ${field}: ${problem}`, pair.fields);
  }
  const { meta } = pair;
  if (meta.isAuthority) throw refuse('certificate', 'is a certificate authority, not a server certificate');
  if (!meta.hosts.includes(host)) throw refuse('certificate', `does not name ${host} among its subject alternative names`);
  if (meta.notBefore > now) throw refuse('certificate', 'is not valid yet');
  if (meta.notAfter <= now) throw refuse('certificate', 'has expired');

  const name = acmeCertificateName(host);
  const sealed = await seal(pair.privateKeyPkcs8Pem, config['database.crypto.encryption_key'], PRIVATE_KEY_CONTEXT);
  const { rows: [row] } = await db.execute<{ name: string }>(sql`
    with released as (
      update acme_leases set expires_at = now(), last_error = null
      where host = ${host} and node_id = ${nodeId} and expires_at > now()
      returning host
    )
    insert into certificates (name, kind, certificate_pem, chain_pem, private_key_sealed, issuer_id, subject, issuer_subject, hosts,
                              algorithm, key_size, serial_number, fingerprint_sha256, not_before, not_after)
    select ${name}::text, 'acme', ${pair.certificatePem}::text, ${pair.chainPem}::text, ${sealed}::text, null, ${meta.subject}::text,
           ${meta.issuerSubject}::text, array(select jsonb_array_elements_text(${JSON.stringify(meta.hosts)}::jsonb)), ${meta.algorithm}::text,
           ${meta.keySize}::int, ${meta.serialNumber}::text, ${meta.fingerprintSha256}::text, ${meta.notBefore.toISOString()}::timestamptz,
           ${meta.notAfter.toISOString()}::timestamptz
    from released
    on conflict (name) do update set kind = 'acme', certificate_pem = excluded.certificate_pem, chain_pem = excluded.chain_pem,
      private_key_sealed = excluded.private_key_sealed, issuer_id = null, subject = excluded.subject, issuer_subject = excluded.issuer_subject,
      hosts = excluded.hosts, algorithm = excluded.algorithm, key_size = excluded.key_size, serial_number = excluded.serial_number,
      fingerprint_sha256 = excluded.fingerprint_sha256, not_before = excluded.not_before, not_after = excluded.not_after, updated_at = now()
    returning name`);
  if (!row) throw await noLease(db, nodeId, host);
  return { name, host, fingerprint_sha256: meta.fingerprintSha256, not_after: meta.notAfter.toISOString() };
}

/** Why nothing was stored: the node's lease ran out, or it holds none (never did, or another node took the host since). */
async function noLease(db: Db, nodeId: string, host: string): Promise<Error> {
  const { rows: [lease] } = await db.execute<{ own: boolean }>(sql`select node_id = ${nodeId} as own from acme_leases where host = ${host}`);
  return lease?.own
    ? conflict(`this node's ACME lease for ${host} has expired: nothing stored (take a new lease and order again)`)
    : conflict(`this node holds no ACME lease for ${host}`);
}
