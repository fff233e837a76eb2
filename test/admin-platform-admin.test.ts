// Session-based platform admin (issue 27, "Platform admin"): `users.platform_admin`,
// granted and revoked by the operator binary (`edgemail admin grant-platform-admin
// --email`) or by a platform admin through PUT/DELETE
// /api/v1/admin/users/{id}/platform-admin. A session of such a user may call
// /api/v1/admin/*; revoking holds on the very next request; the Origin rule holds;
// no one grants themselves; a session that hands out a lasting way in must have
// signed in recently. Also the admin lists the console's admin pages read: plans,
// projects (paged, searched by name), relay nodes of every project with their
// heartbeat, and a node's dead letters as its heartbeat reported them.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { platformToken, seedProject, sessionCookie, startTestStack, type TestStack } from './support/stack.js';
import { withSession } from './support/console.js';
import { eventually } from './support/wait.js';
import { enroll, heartbeat } from './support/relay.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

let stack: TestStack;
let admin: string;

beforeAll(async () => {
  stack = await startTestStack();
  admin = await platformToken(stack, { name: 'ops-grants' });
});
afterAll(async () => { await stack?.stop(); });

/** `edgemail <args>` on the test database, as an operator runs it. */
function edgemail(args: string[]): Promise<{ code: number; stderr: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SERVICE_')));
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'edge/cli/main.ts', ...args, '--database-url', stack.databaseUrl], { cwd: ROOT, env, timeout: 60_000 }, (err, _stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stderr });
    });
  });
}

const asSession = (method: string, path: string, cookie: string, body?: unknown, origin?: string) =>
  stack.call(method, path, { headers: { ...withSession(stack, cookie), ...(origin ? { origin } : {}) }, body });
const isAdmin = async (userId: string) => (await stack.sql.query('SELECT platform_admin FROM users WHERE id = $1', [userId])).rows[0].platform_admin as boolean;
const ownTrail = async (userId: string) => (await stack.sql.query(
  `SELECT type, detail FROM audit_events WHERE category = 'security' AND actor_id = $1 AND type LIKE 'auth.platform_admin.%' ORDER BY created_at, id`, [userId])).rows;

/** A user of their own project, with a fresh password session. */
async function person(name: string) {
  const { user, project } = await seedProject(stack, admin, name);
  return { user, project, cookie: await sessionCookie(stack, user.id) };
}

describe('a console session as platform admin', () => {
  test('plain → 403; granted by the operator → 200 on the next request; revoked → 403 on the next request', async () => {
    const ada = await person('ada');
    const plain = await asSession('GET', '/api/v1/admin/users', ada.cookie);
    expect(plain.status).toBe(403);
    expect(plain.body.error).toBe('admin privileges required');
    expect((await asSession('GET', '/app/api/session', ada.cookie)).body.user.platform_admin).toBe(false);

    const granted = await edgemail(['admin', 'grant-platform-admin', '--email', ada.user.email.toUpperCase()]);
    expect(granted.code, granted.stderr).toBe(0);
    expect(granted.stderr).toContain(`${ada.user.email} is a platform admin`);
    const listed = await asSession('GET', '/api/v1/admin/users', ada.cookie);
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.users.find((u: { id: string }) => u.id === ada.user.id)).toMatchObject({ platform_admin: true });
    expect((await asSession('GET', '/app/api/session', ada.cookie)).body.user.platform_admin).toBe(true);
    // The same session, unchanged, may act: a mutation from the service's own origin.
    const made = await asSession('POST', '/api/v1/admin/users', ada.cookie, { email: `made-by-ada-${crypto.randomUUID().slice(0, 6)}@example.com` });
    expect(made.status, JSON.stringify(made.body)).toBe(201);

    const revoked = await edgemail(['admin', 'revoke-platform-admin', '--email', ada.user.email]);
    expect(revoked.code, revoked.stderr).toBe(0);
    const after = await asSession('GET', '/api/v1/admin/users', ada.cookie);
    expect(after.status).toBe(403);
    expect(after.body.error).toBe('admin privileges required');
    // Still signed in to the console: only the admin power went.
    expect((await asSession('GET', '/app/api/session', ada.cookie)).status).toBe(200);
    expect(await ownTrail(ada.user.id)).toEqual([
      { type: 'auth.platform_admin.granted', detail: 'operator command' },
      { type: 'auth.platform_admin.revoked', detail: 'operator command' },
    ]);
  });

  test('the operator command names an unknown email and changes nothing', async () => {
    const run = await edgemail(['admin', 'grant-platform-admin', '--email', 'nobody-here@example.com']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('no user with email nobody-here@example.com');
    const { rows } = await stack.sql.query('SELECT count(*)::int AS n FROM users WHERE platform_admin');
    expect(rows[0].n).toBe(0);
  });

  test('a non-admin cannot grant themselves, nor anyone; a project key with * cannot either', async () => {
    const eve = await person('eve');
    const self = await asSession('PUT', `/api/v1/admin/users/${eve.user.id}/platform-admin`, eve.cookie);
    expect(self.status).toBe(403);
    expect(self.body.error).toBe('admin privileges required');
    const { token } = await (await seedProject(stack, admin, 'eve-keys')).key(['*']);
    const byKey = await stack.call('PUT', `/api/v1/admin/users/${eve.user.id}/platform-admin`, { token });
    expect(byKey.status).toBe(403);
    expect(await isAdmin(eve.user.id)).toBe(false);
    expect(await ownTrail(eve.user.id)).toEqual([]);
  });

  test('an admin session grants and revokes another user; the grantee holds it from the next request and loses it on the next', async () => {
    const ada = await person('ada-2');
    const bob = await person('bob');
    await stack.call('PUT', `/api/v1/admin/users/${ada.user.id}/platform-admin`, { token: admin });

    const grant = await asSession('PUT', `/api/v1/admin/users/${bob.user.id}/platform-admin`, ada.cookie);
    expect(grant.status, JSON.stringify(grant.body)).toBe(200);
    expect(grant.body).toMatchObject({ user: { id: bob.user.id, platform_admin: true }, changed: true });
    expect((await asSession('GET', '/api/v1/admin/credentials', bob.cookie)).status).toBe(200);
    // Idempotent: nothing new in the trail.
    expect((await asSession('PUT', `/api/v1/admin/users/${bob.user.id}/platform-admin`, ada.cookie)).body.changed).toBe(false);

    const revoke = await asSession('DELETE', `/api/v1/admin/users/${bob.user.id}/platform-admin`, ada.cookie);
    expect(revoke.status).toBe(200);
    expect(revoke.body).toMatchObject({ user: { platform_admin: false }, changed: true });
    expect((await asSession('GET', '/api/v1/admin/credentials', bob.cookie)).status).toBe(403);

    expect(await ownTrail(bob.user.id)).toEqual([
      { type: 'auth.platform_admin.granted', detail: `user=${ada.user.id}` },
      { type: 'auth.platform_admin.revoked', detail: `user=${ada.user.id}` },
    ]);
    // The admin trail names the acting user (the audit middleware writes after the answer).
    const adminTrail = () => stack.sql.query(
      `SELECT type, actor_id, path FROM audit_events WHERE type LIKE 'user.platform_admin_%' AND path = $1 ORDER BY created_at, id`,
      [`/api/v1/admin/users/${bob.user.id}/platform-admin`]).then((r) => r.rows);
    expect(await eventually(adminTrail, (rows) => rows.length >= 3)).toEqual([
      { type: 'user.platform_admin_granted', actor_id: ada.user.id, path: `/api/v1/admin/users/${bob.user.id}/platform-admin` },
      { type: 'user.platform_admin_granted', actor_id: ada.user.id, path: `/api/v1/admin/users/${bob.user.id}/platform-admin` },
      { type: 'user.platform_admin_revoked', actor_id: ada.user.id, path: `/api/v1/admin/users/${bob.user.id}/platform-admin` },
    ]);
  });

  test('a cross-Origin mutation with an admin\'s cookie is refused and changes nothing', async () => {
    const ada = await person('ada-3');
    const carol = await person('carol');
    await stack.call('PUT', `/api/v1/admin/users/${ada.user.id}/platform-admin`, { token: admin });
    const evil = 'https://evil.example';
    const grant = await asSession('PUT', `/api/v1/admin/users/${carol.user.id}/platform-admin`, ada.cookie, undefined, evil);
    expect(grant.status).toBe(403);
    expect(grant.body.error).toMatch(/^cross-origin request refused: Origin https:\/\/evil.example/);
    expect(await isAdmin(carol.user.id)).toBe(false);
    const email = `csrf-${crypto.randomUUID().slice(0, 6)}@example.com`;
    const create = await asSession('POST', '/api/v1/admin/users', ada.cookie, { email }, evil);
    expect(create.status).toBe(403);
    // No Origin at all is refused too: a browser always sends one on a mutation.
    const bare = await stack.call('POST', '/api/v1/admin/users', { headers: { cookie: ada.cookie }, body: { email } });
    expect(bare.status).toBe(403);
    const { rows } = await stack.sql.query('SELECT 1 FROM users WHERE email = $1', [email]);
    expect(rows).toEqual([]);
  });

  test('a session signed in over 15 minutes ago cannot grant, mint a credential or set a password; it may still read and revoke', async () => {
    const ada = await person('ada-4');
    const dan = await person('dan');
    await stack.call('PUT', `/api/v1/admin/users/${ada.user.id}/platform-admin`, { token: admin });
    await stack.call('PUT', `/api/v1/admin/users/${dan.user.id}/platform-admin`, { token: admin });
    await stack.sql.query(`UPDATE sessions SET created_at = now() - interval '20 minutes' WHERE user_id = $1`, [ada.user.id]);
    const credentials = async () => (await stack.sql.query('SELECT count(*)::int AS n FROM platform_credentials')).rows[0].n as number;
    const before = await credentials();

    const refused = [
      [await asSession('PUT', `/api/v1/admin/users/${ada.user.id}/platform-admin`, ada.cookie), /^sign in again to make a user a platform admin/],
      [await asSession('POST', '/api/v1/admin/credentials', ada.cookie, { name: 'stolen' }), /^sign in again to mint a platform credential/],
      [await asSession('PUT', `/api/v1/admin/users/${dan.user.id}/password`, ada.cookie, { password: 'a brand new password' }), /^sign in again to set a user's password/],
    ] as const;
    for (const [reply, error] of refused) {
      expect(reply.status).toBe(403);
      expect(reply.body.error).toMatch(error);
    }
    expect(await credentials()).toBe(before);
    expect((await stack.sql.query('SELECT password_hash FROM users WHERE id = $1', [dan.user.id])).rows[0].password_hash).toBeNull();

    expect((await asSession('GET', '/api/v1/admin/users', ada.cookie)).status).toBe(200);
    expect((await asSession('DELETE', `/api/v1/admin/users/${dan.user.id}/platform-admin`, ada.cookie)).status).toBe(200);
    expect(await isAdmin(dan.user.id)).toBe(false);
  });

  test('an unknown user is 404 and nothing is written', async () => {
    const missing = crypto.randomUUID();
    expect((await stack.call('PUT', `/api/v1/admin/users/${missing}/platform-admin`, { token: admin })).status).toBe(404);
    expect((await stack.call('DELETE', `/api/v1/admin/users/${missing}/platform-admin`, { token: admin })).status).toBe(404);
  });
});

describe('admin lists', () => {
  test('plans: every one, oldest first; a session of a non-admin is refused', async () => {
    const made = [];
    for (const name of ['list-basic', 'list-pro']) {
      const r = await stack.call('POST', '/api/v1/admin/plans', { token: admin, body: { name, hourly_email_limit: 10 } });
      made.push(r.body.plan);
    }
    const listed = await stack.call('GET', '/api/v1/admin/plans', { token: admin });
    expect(listed.status).toBe(200);
    const names = listed.body.plans.map((p: { name: string }) => p.name);
    expect(names.indexOf('list-basic')).toBeLessThan(names.indexOf('list-pro'));
    expect(listed.body.plans).toEqual(expect.arrayContaining(made));
    const plain = await person('plans-plain');
    expect((await asSession('GET', '/api/v1/admin/plans', plain.cookie)).status).toBe(403);
  });

  test('projects: newest first, paged with a total, searched by name case-insensitively; LIKE characters match themselves; bad paging is 400', async () => {
    const tag = crypto.randomUUID().slice(0, 6);
    const ids: string[] = [];
    for (const name of [`Zeta ${tag} one`, `zeta ${tag} two`, `zeta ${tag} 100%`, `other ${tag}`]) {
      ids.push((await stack.call('POST', '/api/v1/admin/projects', { token: admin, body: { name } })).body.project.id);
    }
    const first = await stack.call('GET', `/api/v1/admin/projects?q=ZETA%20${tag}&limit=2`, { token: admin });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ total: 3, limit: 2, offset: 0 });
    expect(first.body.projects.map((p: { id: string }) => p.id)).toEqual([ids[2], ids[1]]);
    const second = await stack.call('GET', `/api/v1/admin/projects?q=zeta%20${tag}&limit=2&offset=2`, { token: admin });
    expect(second.body.projects.map((p: { id: string }) => p.id)).toEqual([ids[0]]);
    expect(second.body.total).toBe(3);
    // `%` is a character, not a wildcard.
    const percent = await stack.call('GET', `/api/v1/admin/projects?q=${encodeURIComponent(`${tag} 100%`)}`, { token: admin });
    expect(percent.body.projects.map((p: { id: string }) => p.id)).toEqual([ids[2]]);
    expect((await stack.call('GET', `/api/v1/admin/projects?q=${encodeURIComponent(`${tag}%one`)}`, { token: admin })).body.total).toBe(0);
    const all = await stack.call('GET', '/api/v1/admin/projects?limit=200', { token: admin });
    expect(all.body.total).toBeGreaterThanOrEqual(4);
    const bad = await stack.call('GET', '/api/v1/admin/projects?limit=0', { token: admin });
    expect(bad.status).toBe(400);
    expect(bad.body.fields).toHaveProperty('limit');
  });

  test('relay nodes of every project with their heartbeat; a node\'s dead letters as reported; an unknown node is 404', async () => {
    const a = await seedProject(stack, admin, 'nodes-a');
    const b = await seedProject(stack, admin, 'nodes-b');
    const nodeA = await enroll(stack, (await a.key(['relay:write'])).token, 'mx-a');
    const nodeB = await enroll(stack, (await b.key(['relay:write'])).token, 'mx-b');
    expect((await heartbeat(stack, nodeA.token, { spool_depth: 3, dead_letters: 2, dead_letter_bytes: 4096 })).status).toBe(200);

    const listed = await stack.call('GET', '/api/v1/admin/relay-nodes', { token: admin });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    const byId = new Map(listed.body.relay_nodes.map((n: { id: string }) => [n.id, n]));
    expect(byId.get(nodeA.id)).toMatchObject({ project_id: a.project.id, project_name: 'nodes-a', name: 'mx-a', spool_depth: 3, dead_letters: 2, dead_letter_bytes: 4096, installation_wide: false, last_heartbeat_at: expect.any(String) });
    expect(byId.get(nodeB.id)).toMatchObject({ project_id: b.project.id, project_name: 'nodes-b', last_heartbeat_at: null });
    expect(JSON.stringify(listed.body)).not.toMatch(/key_hash|myr_[^"]*_/);
    const onlyB = await stack.call('GET', `/api/v1/admin/relay-nodes?project_id=${b.project.id}`, { token: admin });
    expect(onlyB.body).toMatchObject({ total: 1, relay_nodes: [{ id: nodeB.id }] });

    const dead = await stack.call('GET', `/api/v1/admin/relay-nodes/${nodeA.id}/dead-letters`, { token: admin });
    expect(dead.status).toBe(200);
    expect(dead.body).toEqual({
      relay_node_id: nodeA.id, relay_node_name: 'mx-a', project_id: a.project.id, project_name: 'nodes-a',
      count: 2, bytes: 4096, reported_at: byId.get(nodeA.id) && (byId.get(nodeA.id) as { last_heartbeat_at: string }).last_heartbeat_at,
    });
    expect((await stack.call('GET', `/api/v1/admin/relay-nodes/${crypto.randomUUID()}/dead-letters`, { token: admin })).status).toBe(404);
    // A project key with relay:read sees its own nodes on /api/v1/relay/nodes, never these.
    expect((await stack.call('GET', '/api/v1/admin/relay-nodes', { token: (await a.key(['relay:read'])).token })).status).toBe(403);
  });
});
