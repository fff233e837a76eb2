// A domain's tracking setting (docs/tracking.md, "Turning it on" and "A
// tracking host of your own"): opens and clicks, and a custom host proven
// as domain ownership is, in DNS: `<host> CNAME <the service's host>`, found
// through `dns.doh_url` when it is set. The host must be under a domain this
// project proved it owns, so no project can point its links at another's name.
import { and, eq } from 'drizzle-orm';
import { domains, domainTracking } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { resolveDns } from '../../net/doh.js';
import { invalid, notFound, unavailable } from '../errors.js';
import { publicHost } from '../domains/dns-records.js';
import type { DomainTrackingRecord } from '../../contracts/tracking.js';

type Settings = Pick<Config, 'server.public_url' | 'dns.doh_url'>;
type Row = { opens: boolean; clicks: boolean; host: string | null; hostVerifiedAt: Date | null };

function present(settings: Settings, domainId: string, row: Row | undefined): DomainTrackingRecord {
  const host = row?.host ?? null;
  return {
    domain_id: domainId, opens: row?.opens ?? false, clicks: row?.clicks ?? false, host,
    host_verified_at: row?.hostVerifiedAt?.toISOString() ?? null,
    cname: host ? { name: host, value: publicHost(settings) } : null,
  };
}

async function domainOf(db: Db, projectId: string, id: string) {
  const [domain] = await db.select({ id: domains.id, name: domains.name, ownershipProvenAt: domains.ownershipProvenAt })
    .from(domains).where(and(eq(domains.projectId, projectId), eq(domains.id, id)));
  if (!domain) throw notFound('domain not found');
  return domain;
}

export async function getDomainTracking(db: Db, settings: Settings, projectId: string, id: string): Promise<DomainTrackingRecord> {
  await domainOf(db, projectId, id);
  const [row] = await db.select().from(domainTracking).where(eq(domainTracking.domainId, id));
  return present(settings, id, row);
}

const hostProblem = (problem: string) => invalid(`invalid request body: host: ${problem}`, { host: problem });

/** Is `<host> CNAME <target>` published? 503 when the resolver does not answer. */
async function cnameFound(settings: Settings, host: string, target: string): Promise<{ ok: boolean; found: string[] }> {
  const answer = await resolveDns(host, 'CNAME', { dohUrl: settings['dns.doh_url'], cache: false });
  if (answer.status === 'error') throw unavailable(`could not check the tracking host's CNAME record: ${answer.problem}`);
  const found = answer.status === 'ok' ? answer.records.map((r) => r.data.toLowerCase().replace(/\.$/, '')) : [];
  return { ok: found.includes(target), found };
}

export async function putDomainTracking(
  db: Db, settings: Settings, projectId: string, id: string,
  input: { opens: boolean; clicks: boolean; host?: string | null },
): Promise<DomainTrackingRecord> {
  const domain = await domainOf(db, projectId, id);
  const host = input.host ?? null;
  let hostVerifiedAt: Date | null = null;
  if (host !== null) {
    if (!host.endsWith(`.${domain.name}`)) throw hostProblem(`must be a name under ${domain.name} (links.${domain.name})`);
    if (!domain.ownershipProvenAt) throw hostProblem(`${domain.name} has not proven its ownership yet: publish its DNS records and POST /api/v1/domains/${id}/verify first`);
    const target = publicHost(settings);
    const { ok, found } = await cnameFound(settings, host, target);
    if (!ok) {
      throw hostProblem(`publish the record ${host} CNAME ${target} first${found.length ? ` (found CNAME ${found.join(', ')})` : ' (none found)'}`);
    }
    hostVerifiedAt = new Date();
  }
  const values = { opens: input.opens, clicks: input.clicks, host, hostVerifiedAt, updatedAt: new Date() };
  const [row] = await db.insert(domainTracking).values({ domainId: id, projectId, ...values })
    .onConflictDoUpdate({ target: domainTracking.domainId, set: values })
    .returning();
  return present(settings, id, row);
}
