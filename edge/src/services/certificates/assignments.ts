// Which certificate each SMTP listener presents (resolution step 1), and the
// rules for changing it: one place, used by the admin routes
// (/api/v1/admin/listeners) and by the offline `edgemail tls` commands, which
// write the database directly while the edge may be down. Relay nodes are not
// told: every write to these tables bumps `tls_state.generation` (migration
// 0012's triggers) and the nodes poll it.
import { and, asc, eq } from 'drizzle-orm';
import { certificates, listenerCertificates, relayNodes, tlsState } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { AnyDb } from '../../db/any-db.js';
import { isForeignKeyViolation } from '../../db/errors.js';
import type { ListenerNodeReport, ListenerRecord, Presents } from '../../contracts/listener.js';
import { iso } from '../../contracts/common.js';
import { conflict, notFound } from '../errors.js';
import { isTlsListener, listenerTlsEnabled, TLS_LISTENERS, type TlsListener } from './listeners.js';

function checkedListener(name: string): TlsListener {
  if (!isTlsListener(name)) throw notFound(`listener not found: "${name}" (the listeners are ${TLS_LISTENERS.join(' and ')})`);
  return name;
}

/** What an assignment or unassignment did, for the CLI to say. */
export interface AssignmentOutcome {
  listener: TlsListener;
  /** The certificate assigned before (null: none). */
  previous: string | null;
}

async function assignedName(db: AnyDb, listener: TlsListener): Promise<string | null> {
  const [row] = await db.select({ name: certificates.name }).from(listenerCertificates)
    .innerJoin(certificates, eq(certificates.id, listenerCertificates.certificateId))
    .where(eq(listenerCertificates.listener, listener));
  return row?.name ?? null;
}

/**
 * Assigns the stored certificate `certificateName` to `listener`, replacing
 * any assignment. Refused, changing nothing: an unknown listener or
 * certificate (not_found), a certificate authority, an expired certificate
 * (conflict). A listener with TLS off takes the assignment all the same.
 */
export async function assignCertificate(db: AnyDb, listener: string, certificateName: string, now = new Date()): Promise<AssignmentOutcome> {
  const name = checkedListener(listener);
  const [certificate] = await db.select({ id: certificates.id, kind: certificates.kind, notAfter: certificates.notAfter })
    .from(certificates).where(eq(certificates.name, certificateName));
  if (!certificate) throw notFound(`certificate not found: "${certificateName}"`);
  if (certificate.kind === 'authority') {
    throw conflict(`certificate "${certificateName}" is a certificate authority: assign a certificate it issued, not the authority itself`);
  }
  if (certificate.notAfter.getTime() <= now.getTime()) {
    throw conflict(`certificate "${certificateName}" expired on ${certificate.notAfter.toISOString()}: renew or replace it before assigning it`);
  }
  const previous = await assignedName(db, name);
  try {
    await db.insert(listenerCertificates).values({ listener: name, certificateId: certificate.id, assignedAt: now })
      .onConflictDoUpdate({ target: listenerCertificates.listener, set: { certificateId: certificate.id, assignedAt: now } });
  } catch (e) {
    // Deleted between the read and the write: the delete won.
    if (isForeignKeyViolation(e)) throw notFound(`certificate not found: "${certificateName}"`);
    throw e;
  }
  return { listener: name, previous };
}

/**
 * Drops the listener's assignment, so it falls back to the rest of the chain
 * (ACME for `acme.hosts`, then the shared self-signed pair). A listener with
 * nothing assigned is left as it is: `previous` is null then.
 */
export async function unassignCertificate(db: AnyDb, listener: string): Promise<AssignmentOutcome> {
  const name = checkedListener(listener);
  const previous = await assignedName(db, name);
  await db.delete(listenerCertificates).where(eq(listenerCertificates.listener, name));
  return { listener: name, previous };
}

/** The entry for `listener` in a node's reported `listeners` (objects with a `name`), or null. */
function reportedListener(listeners: unknown, listener: TlsListener): unknown {
  if (!Array.isArray(listeners)) return null;
  return listeners.find((l) => typeof l === 'object' && l !== null && (l as { name?: unknown }).name === listener) ?? null;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What the node reported presenting on `listener`. A node with per-listener
 * resolution puts it in each listener entry (`certificate`, absent with TLS
 * off: null here); an older node reports one `tls` for all its listeners.
 */
function reportedTls(listeners: unknown, entry: unknown, tls: unknown): unknown {
  const perListener = Array.isArray(listeners) && listeners.some((l) => isObject(l) && isObject(l.certificate));
  if (!perListener) return tls ?? null;
  return isObject(entry) && isObject(entry.certificate) ? entry.certificate : null;
}

/** The certificate generation the node holds (`tls.generation`), null when it did not say. */
function reportedGeneration(tls: unknown): number | null {
  return isObject(tls) && typeof tls.generation === 'number' ? tls.generation : null;
}

/** Every listener, in TLS_LISTENERS order, as docs/listeners.md describes it. */
export async function listListeners(db: AnyDb, config: Config): Promise<ListenerRecord[]> {
  const [assigned, nodes, [state]] = await Promise.all([
    db.select({
      listener: listenerCertificates.listener, name: certificates.name, kind: certificates.kind,
      hosts: certificates.hosts, notAfter: certificates.notAfter,
    }).from(listenerCertificates).innerJoin(certificates, eq(certificates.id, listenerCertificates.certificateId)),
    // The nodes that present the installation's certificates: installation-wide and not revoked.
    db.select({
      id: relayNodes.id, name: relayNodes.name, lastHeartbeatAt: relayNodes.lastHeartbeatAt,
      listeners: relayNodes.listeners, tls: relayNodes.tls,
    }).from(relayNodes)
      .where(and(eq(relayNodes.installationWide, true), eq(relayNodes.revoked, false)))
      .orderBy(asc(relayNodes.name), asc(relayNodes.id)),
    db.select({ generation: tlsState.generation }).from(tlsState),
  ]);
  const generation = state?.generation ?? 0;
  const acmeHosts = config['acme.enabled'] ? config['acme.hosts'] : [];
  return TLS_LISTENERS.map((listener) => {
    const row = assigned.find((a) => a.listener === listener);
    const tlsOn = listenerTlsEnabled(config, listener);
    const presents: Presents = !tlsOn ? 'none' : row ? 'assigned' : acmeHosts.length ? 'acme' : 'self_signed';
    const reports: ListenerNodeReport[] = nodes.map((n) => {
      const entry = reportedListener(n.listeners, listener);
      return {
        node_id: n.id, name: n.name, last_heartbeat_at: iso(n.lastHeartbeatAt),
        listener: entry, tls: reportedTls(n.listeners, entry, n.tls), generation: reportedGeneration(n.tls),
      };
    });
    return {
      name: listener,
      tls: tlsOn ? 'on' : 'off',
      certificate: row ? { name: row.name, kind: row.kind, hosts: row.hosts, not_after: row.notAfter.toISOString() } : null,
      presents,
      acme_hosts: presents === 'acme' ? [...acmeHosts] : [],
      generation,
      nodes: reports,
    };
  });
}

/** One listener (not_found for a name that is none). */
export async function getListener(db: AnyDb, config: Config, listener: string): Promise<ListenerRecord> {
  const name = checkedListener(listener);
  const all = await listListeners(db, config);
  return all.find((l) => l.name === name)!;
}

/** A stored certificate as `edgemail tls status` lists it (never the private half). */
export interface StoredCertificateSummary {
  name: string;
  kind: string;
  hosts: string[];
  not_after: string;
}

/** Every stored certificate, soonest expiry first. */
export async function storedCertificates(db: AnyDb): Promise<StoredCertificateSummary[]> {
  const rows = await db.select({ name: certificates.name, kind: certificates.kind, hosts: certificates.hosts, notAfter: certificates.notAfter })
    .from(certificates).orderBy(asc(certificates.notAfter), asc(certificates.name));
  return rows.map((r) => ({ name: r.name, kind: r.kind, hosts: r.hosts, not_after: r.notAfter.toISOString() }));
}
