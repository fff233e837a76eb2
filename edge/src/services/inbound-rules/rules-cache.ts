// The routing rules ingest needs, read in the same statement as the
// recipients' projects (inbound-emails/recipients.ts) and compiled once per
// isolate. Each project's rules carry a version: the md5 of every rule's
// id, position and updated_at, so any create, edit, move or delete changes it
// (an edit sets updated_at; a move renumbers positions; ids are never reused).
// The statement sends the rules themselves only when the isolate does not
// already hold that version, so a steady stream of mail costs no second round
// trip and no recompiling, and a rule change is seen by the very next message.
import { sql, type SQL } from 'drizzle-orm';
import { inboundRules } from '@edgemail/schema';
import { compileRule, type CompiledRule, type RuleMatch } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { loadRules, type IngestRule } from './evaluate.js';

/** What a shares row says of its project's rules: their version (null: none), and the rules unless the isolate has them. */
export type RulesColumns = { rulesVersion: string | null; rules: IngestRule[] | string | null };

/** Projects whose compiled rules an isolate keeps; past it the oldest entry goes. */
const MAX_PROJECTS = 1000;
const compiled = new Map<string, { version: string; rules: CompiledRule<IngestRule>[] }>();
/** Which project a domain was in when last seen: only a hint for the versions the statement is told (a wrong one costs the rules' bytes, never a wrong answer). */
const projectOfDomain = new Map<string, string>();

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_PROJECTS) map.delete(map.keys().next().value!);
}

/** The rule versions this isolate holds for the projects these domains were last in: their rules are not sent again. */
export function knownVersions(domainNames: string[]): string[] {
  const out = new Set<string>();
  for (const name of domainNames) {
    const projectId = projectOfDomain.get(name);
    const version = projectId && compiled.get(projectId)?.version;
    if (version) out.add(version);
  }
  return [...out];
}

/**
 * The lateral join that gives each row of `domains` its project's rules
 * version (`rr.version`) and rules (`rr.rules`, in position order), for
 * `rulesSelect` below.
 */
export const rulesLateral = (projectId: SQL) => sql`left join lateral (
  select md5(string_agg(r.id::text || '@' || r.position::text || '@' || r.updated_at::text, ',' order by r.position)) as version,
    json_agg(json_build_object('id', r.id, 'action', r.action, 'match', r.match, 'refuseText', r.refuse_text,
      'webhookIds', r.webhook_ids, 'forwardTo', r.forward_to) order by r.position) as rules
  from ${inboundRules} r where r.project_id = ${projectId}) rr on true`;

/** The two RulesColumns; the rules only when their version is not among `known`. */
export const rulesSelect = (known: string[]) =>
  sql`rr.version as "rulesVersion", case when rr.version = any(${`{${known.join(',')}}`}::text[]) then null else rr.rules end as rules`;

/**
 * Every project's compiled rules from the shares rows (one per domain):
 * the isolate's when the version is the same, else compiled from the row and
 * kept. A project whose rules the row left out but the isolate lacks (its
 * entry was evicted meanwhile) is read on its own.
 */
export async function rulesFromRows(db: Db, rows: (RulesColumns & { projectId: string; name: string })[]): Promise<Map<string, CompiledRule<IngestRule>[]>> {
  const out = new Map<string, CompiledRule<IngestRule>[]>();
  const missing = new Set<string>();
  for (const row of rows) {
    remember(projectOfDomain, row.name, row.projectId);
    if (!row.rulesVersion || out.has(row.projectId)) continue;
    if (row.rules) {
      const list = (typeof row.rules === 'string' ? JSON.parse(row.rules) as IngestRule[] : row.rules)
        .map((r) => compileRule({ ...r, match: r.match as RuleMatch }));
      remember(compiled, row.projectId, { version: row.rulesVersion, rules: list });
      out.set(row.projectId, list);
      continue;
    }
    const held = compiled.get(row.projectId);
    if (held?.version === row.rulesVersion) out.set(row.projectId, held.rules);
    else missing.add(row.projectId);
  }
  if (missing.size) for (const [projectId, list] of await loadRules(db, [...missing])) out.set(projectId, list);
  return out;
}
