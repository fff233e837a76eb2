import { domains } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import { conflict } from '../../http/errors.js';
import type { DkimAlgorithm } from '../../crypto/dkim-keys.js';
import { newDomainKey } from './keys.js';
import { domainColumns, presentDomain } from './present.js';

/**
 * Registers a domain for the project, with a fresh DKIM key pair (private half
 * sealed). A name belongs to one project in the whole installation (relay
 * nodes route mail by it); a taken name is 409 whoever holds it, and the
 * answer does not say who.
 *
 * @param input.name already normalised (`CreateDomainSchema`)
 */
export async function createDomain(
  db: Db,
  settings: Pick<Config, 'database.crypto.encryption_key' | 'server.public_url'>,
  projectId: string,
  input: { name: string; dkim_algorithm: DkimAlgorithm },
) {
  const key = await newDomainKey(settings['database.crypto.encryption_key'], input.dkim_algorithm);
  try {
    const [row] = await db.insert(domains).values({ projectId, name: input.name, ...key }).returning(domainColumns);
    return presentDomain(row!, settings);
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict(`domain ${input.name} is already registered`);
    throw e;
  }
}
