// A project's SSO policy (`projects.sso_required`): whether its members must
// sign in through single sign-on. Stored here; enforced where sessions are
// judged (services/console/sso-rule.ts; docs/console.md, "SSO policy").
import { eq } from 'drizzle-orm';
import { projects } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';

export async function ssoPolicy(db: Db, projectId: string): Promise<{ required: boolean }> {
  const [row] = await db.select({ required: projects.ssoRequired }).from(projects).where(eq(projects.id, projectId));
  if (!row) throw notFound('project not found');
  return row;
}

export async function setSsoPolicy(db: Db, projectId: string, required: boolean): Promise<{ required: boolean }> {
  const [row] = await db.update(projects).set({ ssoRequired: required }).where(eq(projects.id, projectId)).returning({ required: projects.ssoRequired });
  if (!row) throw notFound('project not found');
  return row;
}
