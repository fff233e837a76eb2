import { domains } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { DomainRecord } from '../../contracts/domain.js';
import { iso } from '../../contracts/common.js';
import { expectedRecords, firstRequiredProblem, publicHost, recordStatus, type Verification } from './dns-records.js';
import { ownedElsewhere, provenElsewhereProblem } from './ownership.js';

/** What a domain answer is made from; never the sealed private key. */
export const domainColumns = {
  id: domains.id, projectId: domains.projectId, name: domains.name,
  dkimSelector: domains.dkimSelector, dkimAlgorithm: domains.dkimAlgorithm, dkimPublicKey: domains.dkimPublicKey,
  verification: domains.verification, verifiedAt: domains.verifiedAt, lastCheckedAt: domains.lastCheckedAt,
  ownershipProvenAt: domains.ownershipProvenAt,
  // Whether another project proved this name: read, never stored, so it
  // follows that registration (a deleted owner frees the name at once).
  ownedElsewhere: ownedElsewhere(),
  createdAt: domains.createdAt,
};
export type DomainRow = Pick<typeof domains.$inferSelect, Exclude<keyof typeof domainColumns, 'ownedElsewhere'>> & { ownedElsewhere: boolean };
export type PresentSettings = Pick<Config, 'server.public_url'>;

type StatusFacts = Pick<DomainRow, 'name' | 'verifiedAt' | 'verification' | 'ownedElsewhere' | 'dkimSelector' | 'dkimAlgorithm' | 'dkimPublicKey'>;

/**
 * `failed` when another project proved the name, or after a check found
 * required records gone since it was verified; `verified` while verified_at is
 * set; `pending` otherwise. The reason says why it is `failed`.
 */
export function domainStatus(row: StatusFacts): { status: DomainRecord['status']; reason: string | null } {
  if (row.ownedElsewhere) return { status: 'failed', reason: provenElsewhereProblem(row.name) };
  if (row.verifiedAt) return { status: 'verified', reason: null };
  const verification = row.verification as Verification | null;
  if (verification?.failed) return { status: 'failed', reason: firstRequiredProblem(row, verification) ?? verification.failed.problem };
  return { status: 'pending', reason: null };
}

export function presentDomain(row: DomainRow, settings: PresentSettings): DomainRecord {
  const verification = row.verification as Verification | null;
  const { status, reason } = domainStatus(row);
  return {
    id: row.id,
    project_id: row.projectId,
    name: row.name,
    status,
    status_reason: reason,
    ownership_proven_at: iso(row.ownershipProvenAt),
    verified_at: iso(row.verifiedAt),
    last_checked_at: iso(row.lastCheckedAt),
    dkim: row.dkimSelector && row.dkimAlgorithm
      ? { selector: row.dkimSelector, algorithm: row.dkimAlgorithm as 'rsa' | 'ed25519' }
      : null,
    dns_records: expectedRecords(row, publicHost(settings)).map((record) => {
      const verdict = verification?.[record.purpose];
      return { ...record, status: recordStatus(verdict), ...(verdict?.found ? { found: verdict.found } : {}) };
    }),
    created_at: row.createdAt.toISOString(),
  };
}
