import { plans } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import { conflict } from '../errors.js';

export async function createPlan(db: Db, input: { name: string; hourly_email_limit: number; daily_email_limit: number }) {
  try {
    const [row] = await db.insert(plans)
      .values({ name: input.name, hourlyEmailLimit: input.hourly_email_limit, dailyEmailLimit: input.daily_email_limit })
      .returning();
    return {
      id: row!.id, name: row!.name, hourly_email_limit: row!.hourlyEmailLimit,
      daily_email_limit: row!.dailyEmailLimit, created_at: row!.createdAt.toISOString(),
    };
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict(`a plan named "${input.name}" already exists`);
    throw e;
  }
}
