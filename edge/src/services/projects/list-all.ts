// Every project of the installation, for the platform admin (`GET
// /api/v1/admin/projects`): newest first, a page at a time, optionally only
// those whose name holds `q` (case-insensitive; `%`, `_` and `\` match
// themselves), with the number of matching projects.
import { desc, sql } from 'drizzle-orm';
import { projects } from '@edgemail/schema';
import type { Db } from '../../db/client.js';

/** `q` as a LIKE pattern that matches it literally anywhere in the name. */
const containing = (q: string) => `%${q.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;

export async function listAllProjects(db: Db, q: string | undefined, page: { limit: number; offset: number }) {
  const matching = q ? sql`${projects.name} ilike ${containing(q)}` : undefined;
  const [rows, [count]] = await Promise.all([
    db.select({ id: projects.id, name: projects.name, planId: projects.planId, createdAt: projects.createdAt })
      .from(projects).where(matching)
      .orderBy(desc(projects.createdAt), desc(projects.id))
      .limit(page.limit).offset(page.offset),
    db.select({ n: sql<number>`count(*)::int` }).from(projects).where(matching),
  ]);
  return {
    projects: rows.map((r) => ({ id: r.id, name: r.name, plan_id: r.planId, created_at: r.createdAt.toISOString() })),
    total: count?.n ?? 0,
  };
}
