import { domains } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { DomainRecord } from '../../schemas/domain.js';
import { iso } from '../../schemas/common.js';
import { expectedRecords, publicHost, recordStatus, type Verification } from './dns-records.js';

/** What a domain answer is made from; never the sealed private key. */
export const domainColumns = {
  id: domains.id, projectId: domains.projectId, name: domains.name,
  dkimSelector: domains.dkimSelector, dkimAlgorithm: domains.dkimAlgorithm, dkimPublicKey: domains.dkimPublicKey,
  verification: domains.verification, verifiedAt: domains.verifiedAt, lastCheckedAt: domains.lastCheckedAt,
  createdAt: domains.createdAt,
};
export type DomainRow = Pick<typeof domains.$inferSelect, keyof typeof domainColumns>;
export type PresentSettings = Pick<Config, 'server.public_url'>;

/** `verified` while verified_at is set; `failed` after a check found required records gone; `pending` otherwise. */
export function domainStatus(row: Pick<DomainRow, 'verifiedAt' | 'verification'>): DomainRecord['status'] {
  if (row.verifiedAt) return 'verified';
  return (row.verification as Verification | null)?.failed ? 'failed' : 'pending';
}

export function presentDomain(row: DomainRow, settings: PresentSettings): DomainRecord {
  const verification = row.verification as Verification | null;
  return {
    id: row.id,
    project_id: row.projectId,
    name: row.name,
    status: domainStatus(row),
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
