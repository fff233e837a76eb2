// The advisory locks behind caps: a count and the insert it guards run in one
// transaction behind the lock, so two requests can never both take the last
// place. Each scope is its own lock: a send never waits for a domain
// registration of the same project.
import { sql, type SQL } from 'drizzle-orm';

/** What a project's lock guards: plan send limits, `relay_nodes.max_per_project`, `domains.max_per_project`, the project's last owner. */
export type ProjectLockScope = 'send' | 'relay_nodes' | 'domains' | 'members';

/** What a user's lock guards: the passkeys a user may have. */
export type UserLockScope = 'passkeys';

/**
 * The first statement of a batch (one transaction): a transaction-scoped lock
 * on `scope` for the project, released at commit. Statements after it read
 * (READ COMMITTED) what the previous holder wrote.
 *
 * @example
 * await db.batch([db.execute(projectLock('domains', projectId)), db.execute(insertUnderCap)]);
 */
export function projectLock(scope: ProjectLockScope, projectId: string): SQL {
  return advisoryLock(`edgemail.${scope}:${projectId}`);
}

/** As `projectLock`, for a cap of one user's rows. */
export function userLock(scope: UserLockScope, userId: string): SQL {
  return advisoryLock(`edgemail.user.${scope}:${userId}`);
}

const advisoryLock = (key: string): SQL => sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`;
