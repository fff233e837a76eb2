// What relay nodes may present (`GET /relay/v1/certificates`,
// docs/relay-protocol.md): the listeners' assignments, the ACME certificates
// and the shared self-signed pair, private halves unsealed. Nodes poll it with
// the `tls_state.generation` they hold, and an unchanged generation is answered
// from that one row (generation()), so polling every 15 s stays cheap.
import { eq, sql } from 'drizzle-orm';
import { tlsState } from '@edgemail/schema';
import type { CertificateBundle } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { unseal } from '../../crypto/seal.js';
import { PRIVATE_KEY_CONTEXT } from './self-signed.js';
import { TLS_LISTENERS } from './listeners.js';

/** ACME certificates are stored as `acme:<host>`: names no operator can give (no ':'). */
export const ACME_NAME_PREFIX = 'acme:';

/** The generation nodes compare with what they hold (0 if the row were ever missing). */
export async function tlsGeneration(db: Db): Promise<number> {
  const [row] = await db.select({ generation: tlsState.generation }).from(tlsState).where(eq(tlsState.id, 1));
  return row?.generation ?? 0;
}

interface PairRow extends Record<string, unknown> {
  certificate_pem: string;
  chain_pem: string;
  private_key_sealed: string;
  not_after: string | Date;
}

interface BundleRow extends PairRow {
  name: string;
  kind: string;
  listeners: string[] | null;
}

/** The certificate, then the intermediates served after it (uploaded and ACME chains). */
function withChain(row: { certificate_pem: string; chain_pem: string }): string {
  const chain = row.chain_pem.trim();
  return chain ? `${row.certificate_pem.trimEnd()}\n${chain}\n` : row.certificate_pem;
}

/**
 * The bundle as of `generation`, which the caller read BEFORE calling this.
 * Why that order is safe: the triggers bump the generation in the same
 * transaction as the change. Rows read after the generation are at least as
 * new as it: at worst newer data goes out under an older generation, and the
 * node's next poll sees a different generation and fetches again. The other
 * order could label old rows with a newer generation, and the node would then
 * be answered 304 until the next change, holding stale certificates.
 */
export async function readBundle(db: Db, encryptionKey: string, generation: number): Promise<CertificateBundle> {
  // One statement (one snapshot): an assignment always points at a row of this answer.
  const { rows } = await db.execute<BundleRow>(sql`
    select c.name, c.kind, c.certificate_pem, c.chain_pem, c.private_key_sealed, c.not_after,
           (select array_agg(lc.listener order by lc.listener) from listener_certificates lc where lc.certificate_id = c.id) as listeners
    from certificates c
    where c.kind in ('self_signed', 'acme')
       or exists (select 1 from listener_certificates lc where lc.certificate_id = c.id)
    order by c.name`);
  const bundle: CertificateBundle = {
    generation,
    listeners: Object.fromEntries(TLS_LISTENERS.map((l) => [l, null])),
    acme: {},
    self_signed: null,
    certificates: {},
  };
  for (const row of rows) {
    for (const listener of row.listeners ?? []) bundle.listeners[listener] = row.name;
    if (row.kind === 'self_signed') bundle.self_signed = row.name;
    if (row.kind === 'acme' && row.name.startsWith(ACME_NAME_PREFIX)) bundle.acme[row.name.slice(ACME_NAME_PREFIX.length)] = row.name;
    bundle.certificates[row.name] = {
      certificate: withChain(row),
      private_key: await unseal(row.private_key_sealed, encryptionKey, PRIVATE_KEY_CONTEXT),
      not_after: new Date(row.not_after).toISOString(),
      kind: row.kind,
    };
  }
  return bundle;
}

/** The ETag of a generation, and whether an If-None-Match names it (a list, `W/` or `*` as RFC 9110 allows). */
export function generationEtag(generation: number): string {
  return `"${generation}"`;
}

export function matchesGeneration(ifNoneMatch: string | undefined, generation: number): boolean {
  if (!ifNoneMatch) return false;
  const etag = generationEtag(generation);
  return ifNoneMatch.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === etag || t === `W/${etag}`;
  });
}

/**
 * Step (1) for `GET /relay/v1/certificate` (nodes older than the bundle):
 * the certificate assigned to `listener` with its chain, or null.
 */
export async function findAssignedCertificate(db: Db, encryptionKey: string, listener: string) {
  const { rows: [row] } = await db.execute<PairRow>(sql`
    select c.certificate_pem, c.chain_pem, c.private_key_sealed, c.not_after
    from listener_certificates lc join certificates c on c.id = lc.certificate_id
    where lc.listener = ${listener}`);
  if (!row) return null;
  return {
    certificate: withChain(row),
    private_key: await unseal(row.private_key_sealed, encryptionKey, PRIVATE_KEY_CONTEXT),
    source: 'assigned' as const,
    not_after: new Date(row.not_after).toISOString(),
  };
}
