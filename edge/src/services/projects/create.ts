import { eq, isNull, and, sql } from 'drizzle-orm';
import { memberships, plans, projects, users } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { invalid } from '../errors.js';

/**
 * Creates a project; with an owner, also their owner membership and (if they
 * have none yet) their default project, in one transaction.
 */
export async function createProject(db: Db, input: { name: string; plan_id?: string; owner_id?: string }) {
  const [plan, owner] = await db.batch([
    db.select({ id: plans.id }).from(plans).where(eq(plans.id, input.plan_id ?? sql`null`)),
    db.select({ id: users.id }).from(users).where(eq(users.id, input.owner_id ?? sql`null`)),
  ]);
  if (input.plan_id && !plan.length) throw invalid('invalid request body: plan_id: no such plan', { plan_id: 'no such plan' });
  if (input.owner_id && !owner.length) throw invalid('invalid request body: owner_id: no such user', { owner_id: 'no such user' });

  const id = crypto.randomUUID();
  const insertProject = db.insert(projects).values({ id, name: input.name, planId: input.plan_id ?? null }).returning();
  const [[row]] = input.owner_id
    ? await db.batch([
        insertProject,
        db.insert(memberships).values({ projectId: id, userId: input.owner_id, role: 'owner' }),
        db.update(users).set({ defaultProjectId: id }).where(and(eq(users.id, input.owner_id), isNull(users.defaultProjectId))),
      ])
    : await db.batch([insertProject]);
  return { id: row!.id, name: row!.name, plan_id: row!.planId, created_at: row!.createdAt.toISOString() };
}
