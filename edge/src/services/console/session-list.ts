// A person's own sessions: listing the live ones and ending any one of them.
// Live by the sign-in look-up's rule (services/auth/find-credential.ts):
// before the absolute expiry, used within the idle period, opened after the
// user's last "sign out everywhere". Ending one deletes its row, which the
// sign-in look-up and the event stream's session check
// (services/event-stream/live-sessions.ts) then no longer find.
import { and, desc, eq, gt, sql } from 'drizzle-orm';
import { sessions, users } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';

/** The user's live sessions, most recently signed in first; `current` marks `currentSessionId`. */
export async function listLiveSessions(db: Db, userId: string, currentSessionId: string, idleMs: number) {
  const rows = await db.select({
    id: sessions.id, method: sessions.method, createdAt: sessions.createdAt, lastSeenAt: sessions.lastSeenAt,
    expiresAt: sessions.expiresAt, clientIp: sessions.clientIp, userAgent: sessions.userAgent,
  })
    .from(sessions).innerJoin(users, eq(users.id, sessions.userId))
    .where(and(
      eq(sessions.userId, userId),
      gt(sessions.expiresAt, sql`now()`),
      gt(sessions.lastSeenAt, sql`now() - make_interval(secs => ${idleMs / 1000}::double precision)`),
      sql`${sessions.createdAt} > coalesce(${users.sessionsValidAfter}, '-infinity'::timestamptz)`,
    ))
    .orderBy(desc(sessions.createdAt), desc(sessions.id));
  return rows.map((r) => ({
    id: r.id, method: r.method as 'password' | 'passkey' | 'oidc', created_at: r.createdAt.toISOString(),
    last_seen_at: r.lastSeenAt.toISOString(), expires_at: r.expiresAt.toISOString(),
    client_ip: r.clientIp, user_agent: r.userAgent, current: r.id === currentSessionId,
  }));
}

/** Ends one of the user's sessions; 404 for an unknown id or another user's session (nothing is changed). */
export async function revokeSession(db: Db, userId: string, sessionId: string): Promise<void> {
  const deleted = await db.delete(sessions).where(and(eq(sessions.id, sessionId), eq(sessions.userId, userId))).returning({ id: sessions.id });
  if (!deleted.length) throw notFound('session not found');
}
