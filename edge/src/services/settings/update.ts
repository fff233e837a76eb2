// PATCH /api/v1/admin/settings: overrides of the settings that can change at
// run time (shared/src/config/runtime-settings.ts), each checked by its own
// schema; `null` removes one. Every name is checked before anything is
// stored; the change and its security-trail event are one transaction.
import { auditEvents, installationSettings } from '@edgemail/schema';
import { envName, isRuntimeSetting, parseText, settings, type Setting } from '@edgemail/shared';
import { inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { invalid } from '../errors.js';
import { forgetOverrides } from './overrides.js';

export interface SettingsActor {
  id: string;
  name: string;
  clientIp: string;
  method: string;
  path: string;
}

/** One value as given in JSON, or its text form (`"30s"`, `"a,b"`) as the environment takes it. */
function checked(name: string, given: unknown): { value: unknown } | { problem: string } {
  const setting = settings[name as keyof typeof settings] as Setting<unknown>;
  let value = given;
  if (typeof given === 'string' && setting.kind !== 'string') {
    try { value = parseText(setting.kind, given); } catch (e) { return { problem: (e as Error).message }; }
  }
  const result = setting.schema.safeParse(value);
  if (result.success) return { value: result.data };
  const issue = result.error.issues[0];
  const where = issue && issue.path.length ? ` (item ${issue.path.join('.')})` : '';
  return { problem: `${issue?.message ?? 'invalid value'}${where}` };
}

/** @returns the names set and the names removed, for the answer. */
export async function updateSettings(db: Db, changes: Record<string, unknown>, actor: SettingsActor): Promise<{ set: string[]; removed: string[] }> {
  const names = Object.keys(changes);
  if (names.length === 0) throw invalid('no settings given: send {"<name>": <value>, ...}');
  const problems: Record<string, string> = {};
  const set: { name: string; value: string }[] = [];
  const removed: string[] = [];
  for (const name of names) {
    if (!(name in settings)) { problems[name] = 'unknown setting'; continue; }
    if (!isRuntimeSetting(name)) {
      problems[name] = `cannot be changed at run time: set ${envName(name)} in the environment and restart`;
      continue;
    }
    if (changes[name] === null) { removed.push(name); continue; }
    const result = checked(name, changes[name]);
    if ('problem' in result) problems[name] = result.problem;
    else set.push({ name, value: JSON.stringify(result.value) });
  }
  const refused = Object.keys(problems);
  if (refused.length) {
    throw invalid(`settings refused, nothing changed: ${refused.map((n) => `${n}: ${problems[n]}`).join('; ')}`, problems);
  }

  // Names only: no value (a secret can never be set here, but the trail stays value-free for all).
  const detail = [set.length ? `set: ${set.map((s) => s.name).join(', ')}` : '', removed.length ? `removed: ${removed.join(', ')}` : '']
    .filter(Boolean).join('; ');
  const now = new Date();
  const event = db.insert(auditEvents).values({
    category: 'security', type: 'settings.updated', projectId: null, actorId: actor.id, actorEmail: actor.name.slice(0, 320),
    clientIp: actor.clientIp, method: actor.method, path: actor.path, status: 200, detail,
  });
  const removal = removed.length ? [db.delete(installationSettings).where(inArray(installationSettings.name, removed))] : [];
  const upsert = set.length
    ? [db.insert(installationSettings)
      .values(set.map((s) => ({ ...s, updatedBy: actor.id, updatedAt: now })))
      .onConflictDoUpdate({ target: installationSettings.name, set: { value: sql`excluded.value`, updatedBy: actor.id, updatedAt: now } })]
    : [];
  await db.batch([event, ...removal, ...upsert]);
  forgetOverrides();
  return { set: set.map((s) => s.name), removed };
}
