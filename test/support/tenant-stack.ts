// A test file's stack with the tenancy most API tests start from: a platform
// credential, the project under test with the keys the file asks for, and a
// second project whose data the first one's keys must never reach.
import { afterAll, beforeAll } from 'vitest';
import { platformToken, seedProject, startTestStack, type SeededProject, type StackOptions, type TestStack } from './stack.js';

export interface TenantStack<Key extends string> {
  readonly stack: TestStack;
  /** A platform credential (`mya_…`). */
  readonly admin: string;
  /** The project `acme`, which holds `keys`. */
  readonly tenant: SeededProject;
  /** The project `globex`: another tenant, for showing that `tenant`'s keys never reach its data. */
  readonly other: SeededProject;
  /** The token of one `tenant` key per name given in `keys`. */
  readonly keys: Readonly<Record<Key, string>>;
}

/**
 * Starts the file's stack before its tests and stops it after them, with a
 * platform credential, the projects `acme` (the tenant) and `globex` (the
 * other), and a key in `acme` for each entry of `keys`, made in that order.
 * What it returns can be read inside hooks and tests only.
 *
 * @example
 * const env = useTenantStack({ keys: { reader: ['domains:read'] } });
 * test('lists', async () => {
 *   expect((await env.stack.call('GET', '/api/v1/domains', { token: env.keys.reader })).status).toBe(200);
 * });
 */
export function useTenantStack<Key extends string = never>(
  opts: StackOptions & { keys?: Record<Key, string[]> } = {},
): TenantStack<Key> {
  let stack: TestStack | undefined;
  let seeded: Omit<TenantStack<Key>, 'stack'> | undefined;
  beforeAll(async () => {
    stack = await startTestStack({ settings: opts.settings, captureLogs: opts.captureLogs, persistTo: opts.persistTo });
    const admin = await platformToken(stack);
    const tenant = await seedProject(stack, admin, 'acme');
    const other = await seedProject(stack, admin, 'globex');
    const keys = {} as Record<Key, string>;
    for (const [name, permissions] of Object.entries(opts.keys ?? {}) as [Key, string[]][]) {
      keys[name] = (await tenant.key(permissions)).token;
    }
    seeded = { admin, tenant, other, keys };
  });
  afterAll(async () => { await stack?.stop(); });

  const started = () => {
    if (!stack || !seeded) throw new Error('the tenant stack starts in beforeAll: read it inside a hook or a test');
    return { stack, ...seeded };
  };
  return {
    get stack() { return started().stack; },
    get admin() { return started().admin; },
    get tenant() { return started().tenant; },
    get other() { return started().other; },
    get keys() { return started().keys; },
  };
}
