// Granting and revoking platform admin (`users.platform_admin`): by another
// platform admin through `/api/v1/admin/users/{id}/platform-admin`, or by the
// operator binary (`edgemail admin grant-platform-admin --email`). The change
// and the user's own trail event are one statement each; the session look-up
// reads the flag on every request, so a revocation holds on the next one.
import { eq, sql } from 'drizzle-orm';
import { auditEvents, users } from '@edgemail/schema';
import type { AnyDb } from '../../db/any-db.js';
import { notFound } from '../errors.js';
import { presentUser, userColumns } from './present.js';

/** Who made the change, as the user's own trail shows it. */
export interface GrantedBy {
  /** `credential=<id>`, `user=<id>` or `operator command`. */
  by: string;
  clientIp: string | null;
  method: string;
  path: string;
}

/**
 * @param user the user's id, or (operator binary) its email, matched case-insensitively
 * @returns the user as it is now and whether the flag changed (false: it already was so)
 */
export async function setPlatformAdmin(db: AnyDb, user: { id: string } | { email: string }, grant: boolean, grantedBy: GrantedBy) {
  const where = 'id' in user ? eq(users.id, user.id) : sql`lower(${users.email}) = lower(${user.email})`;
  const [before] = await db.select({ platformAdmin: users.platformAdmin }).from(users).where(where);
  if (!before) throw notFound('id' in user ? 'user not found' : `no user with email ${user.email}`);
  const [row] = await db.update(users).set({ platformAdmin: grant }).where(where).returning(userColumns);
  if (!row) throw notFound('user not found');
  const changed = before.platformAdmin !== grant;
  // In the user's own security trail: a person should see that they were made (or stopped being) an admin.
  if (changed) {
    await db.insert(auditEvents).values({
      category: 'security', type: grant ? 'auth.platform_admin.granted' : 'auth.platform_admin.revoked',
      actorId: row.id, actorEmail: row.email, clientIp: grantedBy.clientIp, method: grantedBy.method, path: grantedBy.path,
      status: 200, detail: grantedBy.by,
    });
  }
  return { user: presentUser(row), changed };
}
