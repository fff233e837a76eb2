import { eq } from 'drizzle-orm';
import { projects } from '@edgemail/schema';
import { exportSource } from './source.js';

/** The project itself, as `POST /api/v1/admin/projects` answered it: one line. */
export const projectSource = exportSource<never>({
  type: 'project',
  async read({ db, projectId }) {
    const rows = await db.select().from(projects).where(eq(projects.id, projectId));
    return {
      records: rows.map((p) => ({ id: p.id, name: p.name, plan_id: p.planId, created_at: p.createdAt.toISOString() })),
      next: null,
    };
  },
});
