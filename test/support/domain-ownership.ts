// Domain ownership for tests whose subject is not the DNS proof itself
// (test/domain-ownership.test.ts proves it through the real check).
import type { TestStack } from './stack.js';

/**
 * Marks a domain registered through the API as proven, as a check that found
 * its DKIM record does: relay nodes accept its mail from then on.
 */
export async function proveOwnership(stack: TestStack, domainId: string): Promise<void> {
  const { rowCount } = await stack.sql.query('UPDATE domains SET ownership_proven_at = now() WHERE id = $1', [domainId]);
  if (rowCount !== 1) throw new Error(`no domain ${domainId} to prove`);
}

/** Registers `name` through `POST /api/v1/domains` with `token` and marks it proven; the domain's id. */
export async function registerProvenDomain(stack: TestStack, token: string, name: string): Promise<string> {
  const registered = await stack.call('POST', '/api/v1/domains', { token, body: { name } });
  if (registered.status !== 201) throw new Error(`registering ${name}: ${registered.status} ${JSON.stringify(registered.body)}`);
  await proveOwnership(stack, registered.body.domain.id);
  return registered.body.domain.id as string;
}
