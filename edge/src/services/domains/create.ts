import { and, eq, sql } from 'drizzle-orm';
import { domains } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { projectLock } from '../../db/project-lock.js';
import { isUniqueViolation } from '../../db/errors.js';
import { invalid, conflict } from '../errors.js';
import type { DkimAlgorithm } from '../../crypto/dkim-keys.js';
import { newDomainKey } from './keys.js';
import { registrationConflict } from './ownership.js';
import { domainColumns, presentDomain } from './present.js';

/**
 * Registers a domain for the project, with a fresh DKIM key pair (private half
 * sealed). Registering proves nothing: the name's mail reaches this project
 * only once a check finds its DKIM record (docs/inbound.md, "Domain
 * ownership"), so an unproven registration elsewhere never blocks the rightful
 * owner. Refused: a name another project has proven (409, without saying
 * which), the same name twice in one project (409), one domain over
 * `domains.max_per_project` (400).
 *
 * @param input.name already normalised (`CreateDomainSchema`)
 */
export async function createDomain(
  db: Db,
  settings: Pick<Config, 'database.crypto.encryption_key' | 'server.public_url' | 'domains.max_per_project'>,
  projectId: string,
  input: { name: string; dkim_algorithm: DkimAlgorithm },
) {
  const { name } = input;
  const taken = await registrationConflict(db, projectId, name);
  if (taken) throw conflict(taken);
  const max = settings['domains.max_per_project'];
  const key = await newDomainKey(settings['database.crypto.encryption_key'], input.dkim_algorithm);
  let inserted: { id: string } | undefined;
  try {
    // The count and the insert under a per-project lock: two concurrent
    // registrations cannot both take the last place.
    const [, result] = await db.batch([
      db.execute(projectLock('domains', projectId)),
      db.execute<{ id: string }>(sql`
        insert into ${domains} (project_id, name, dkim_selector, dkim_algorithm, dkim_private_key_sealed, dkim_public_key)
        select ${projectId}, ${name}, ${key.dkimSelector}, ${key.dkimAlgorithm}, ${key.dkimPrivateKeySealed}, ${key.dkimPublicKey}
        where ${max}::int = 0 or (select count(*) from ${domains} where ${domains.projectId} = ${projectId}) < ${max}::int
        returning id`),
    ]);
    inserted = result.rows[0];
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict(`domain ${name} is already registered in this project`);
    throw e;
  }
  if (!inserted) throw invalid(`domain limit reached: a project may register ${max} domains (domains.max_per_project)`);
  const [row] = await db.select(domainColumns).from(domains).where(and(eq(domains.projectId, projectId), eq(domains.id, inserted.id)));
  return presentDomain(row!, settings);
}
