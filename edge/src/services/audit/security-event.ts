// An account's security event (`auth.*`) written at once, rejected requests
// included: a failed sign-in has no principal for the audit middleware, and
// the trail must say what happened to it (spec "Audit events").
import { auditEvents } from '@edgemail/schema';
import type { Db } from '../../db/client.js';

export interface SecurityEvent {
  type: string;
  /** The user, when the email named one. */
  actorId: string | null;
  /** The email as given (the user's, or the unknown one tried). */
  actorEmail: string;
  clientIp: string;
  /** The request's User-Agent, when it sent one. */
  userAgent?: string | null;
  method: string;
  path: string;
  status: number;
  /** What failed or how: `password`, `totp`, `recovery_code`, `locked`, … */
  detail?: string;
}

/** A User-Agent longer than this is cut: it is the client's to choose. */
const USER_AGENT_MAX = 512;

export async function writeSecurityEvent(db: Db, e: SecurityEvent): Promise<void> {
  await db.insert(auditEvents).values({
    category: 'security', ...e, actorEmail: e.actorEmail.slice(0, 320), userAgent: e.userAgent?.slice(0, USER_AGENT_MAX) ?? null, detail: e.detail ?? null,
  });
}
