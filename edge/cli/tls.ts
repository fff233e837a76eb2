// `edgemail tls status|assign|unassign`: the listeners' certificates, read and
// written straight in the database (the edge may be down, or the operator
// locked out of the API). The rules are the admin routes' own
// (services/certificates/assignments.ts). Running nodes follow by themselves:
// each write bumps `tls_state.generation`, which they poll.
import type { Config } from '@edgemail/shared';
import type { AnyDb } from '../src/db/any-db.js';
import { ServiceError } from '../src/services/errors.js';
import {
  assignCertificate, listListeners, storedCertificates, unassignCertificate,
} from '../src/services/certificates/assignments.js';
import { listenerTlsEnabled } from '../src/services/certificates/listeners.js';
import type { ListenerRecord } from '../src/contracts/listener.js';

/** A refusal of the rules (unknown listener or certificate, an authority, expired): one line, exit 1. */
export class TlsRefusal extends Error {}

export interface TlsFlags {
  listener?: string;
  certificate?: string;
}

/** Within this many days of its end a certificate is flagged (the renewal window). */
const EXPIRY_WARNING_DAYS = 30;
const DAY_MS = 86_400_000;

function expiry(notAfter: string, now: Date): string {
  const left = Math.floor((Date.parse(notAfter) - now.getTime()) / DAY_MS);
  const date = notAfter.slice(0, 10);
  if (Date.parse(notAfter) <= now.getTime()) return `expires ${date} (EXPIRED)`;
  return `expires ${date} (${left} day${left === 1 ? '' : 's'} left${left < EXPIRY_WARNING_DAYS ? ', EXPIRING SOON' : ''})`;
}

const PRESENTS_TEXT: Record<ListenerRecord['presents'], string> = {
  assigned: 'the assigned certificate',
  acme: 'ACME certificates for acme.hosts, the shared self-signed pair for any other name',
  self_signed: 'the shared self-signed pair',
  none: 'nothing (TLS off)',
};

/** What a node last reported for a listener, and whether it holds the current generation. */
function nodeLine(n: ListenerRecord['nodes'][number], generation: number): string {
  const tls = n.tls as { source?: unknown; certificate?: unknown } | null;
  const what = tls && typeof tls.source === 'string'
    ? `reported ${tls.source}${typeof tls.certificate === 'string' ? ` "${tls.certificate}"` : ''}`
    : 'reported no certificate';
  const held = n.generation === null ? '' : n.generation === generation ? ', up to date' : `, holds generation ${n.generation} of ${generation}`;
  return `${what}${held}, last heartbeat ${n.last_heartbeat_at ?? 'never'}`;
}

/** The text `tls status` prints. */
export function renderStatus(listeners: ListenerRecord[], stored: Awaited<ReturnType<typeof storedCertificates>>, now = new Date()): string {
  const lines: string[] = ['listeners:'];
  for (const l of listeners) {
    lines.push(`  ${l.name}: TLS ${l.tls}`);
    lines.push(`    assigned: ${l.certificate ? `${l.certificate.name} (${l.certificate.kind}), ${expiry(l.certificate.not_after, now)}` : 'none'}`);
    lines.push(`    presents: ${l.presents} (${PRESENTS_TEXT[l.presents]})${l.acme_hosts.length ? `; acme.hosts: ${l.acme_hosts.join(', ')}` : ''}`);
    for (const n of l.nodes) lines.push(`    node ${n.name}: ${nodeLine(n, l.generation)}`);
  }
  lines.push('certificates:');
  if (!stored.length) lines.push('  none stored');
  for (const c of stored) {
    lines.push(`  ${c.name}  ${c.kind}  ${c.hosts.length ? c.hosts.join(',') : '-'}  ${expiry(c.not_after, now)}`);
  }
  return `${lines.join('\n')}\n`;
}

async function refusals<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (e) {
    if (e instanceof ServiceError) throw new TlsRefusal(e.message);
    throw e;
  }
}

/** Runs `tls <sub>` on `db`; the status goes to stdout, what a write did to stderr. */
export async function runTls(sub: string, flags: TlsFlags, db: AnyDb, config: Config): Promise<void> {
  switch (sub) {
    case 'status': {
      const [listeners, stored] = await Promise.all([listListeners(db, config), storedCertificates(db)]);
      process.stdout.write(renderStatus(listeners, stored));
      return;
    }
    case 'assign': {
      const done = await refusals(assignCertificate(db, flags.listener!, flags.certificate!));
      const was = done.previous === null ? 'nothing was assigned before' : done.previous === flags.certificate ? 'it was already assigned' : `replacing "${done.previous}"`;
      console.error(listenerTlsEnabled(config, done.listener)
        ? `listener ${done.listener} now presents certificate "${flags.certificate}" (${was}); running relay nodes pick it up at their next poll`
        : `certificate "${flags.certificate}" assigned to listener ${done.listener} (${was}), which has TLS off: it presents nothing until TLS is turned on`);
      return;
    }
    case 'unassign': {
      const done = await refusals(unassignCertificate(db, flags.listener!));
      console.error(done.previous === null
        ? `listener ${done.listener} had no certificate assigned: nothing changed`
        : `listener ${done.listener} no longer presents "${done.previous}": it falls back to ACME (acme.hosts) or the shared self-signed pair; running relay nodes follow at their next poll`);
      return;
    }
  }
}
