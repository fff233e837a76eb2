// Every plan, for the platform admin (`GET /api/v1/admin/plans`): an
// installation has a handful, so the list is not paged.
import { asc } from 'drizzle-orm';
import { plans } from '@edgemail/schema';
import type { Db } from '../../db/client.js';

export async function listPlans(db: Db) {
  const rows = await db.select().from(plans).orderBy(asc(plans.createdAt), asc(plans.id));
  return rows.map((r) => ({
    id: r.id, name: r.name, hourly_email_limit: r.hourlyEmailLimit, daily_email_limit: r.dailyEmailLimit, created_at: r.createdAt.toISOString(),
  }));
}
