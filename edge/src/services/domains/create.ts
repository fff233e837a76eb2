import { domains } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import { conflict } from '../../http/errors.js';
import { domainColumns, presentDomain } from './present.js';

/**
 * Registers a domain for the project. A name belongs to one project in the
 * whole installation (relay nodes route mail by it); a taken name is 409 whoever
 * holds it, and the answer does not say who.
 *
 * @param name already normalised (`CreateDomainSchema`)
 */
export async function createDomain(db: Db, projectId: string, name: string) {
  try {
    const [row] = await db.insert(domains).values({ projectId, name }).returning(domainColumns);
    return presentDomain(row!);
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict(`domain ${name} is already registered`);
    throw e;
  }
}
