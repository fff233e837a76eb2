// A project's members and custom member groups (docs/console.md, "Members and
// groups"): any member reads, admins and owners change, the last owner stays,
// groups refuse `*`, and every change is in the project's audit trail.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { platformToken, seedProject, sessionCookie, startTestStack, type SeededProject, type TestStack } from './support/stack.js';
import { addedEvents, settledAuditEvents } from './support/audit.js';

let stack: TestStack;
let admin: string;
let acme: SeededProject;
/** One user per role in acme, each with a session. */
const people: Record<'owner' | 'admin' | 'member', { id: string; email: string; cookie: string }> = {} as never;

async function addUser(project: string, role: string, email: string) {
  const { rows: [user] } = await stack.sql.query(`INSERT INTO users (email, default_project_id) VALUES ($1, $2) RETURNING id`, [email, project]);
  await stack.sql.query(`INSERT INTO memberships (project_id, user_id, role) VALUES ($1, $2, $3)`, [project, user.id, role]);
  return user.id as string;
}

beforeAll(async () => {
  stack = await startTestStack();
  admin = await platformToken(stack);
  acme = await seedProject(stack, admin, 'acme');
  people.owner = { id: acme.user.id, email: acme.user.email, cookie: await sessionCookie(stack, acme.user.id) };
  for (const role of ['admin', 'member'] as const) {
    const email = `${role}@acme.example`;
    const id = await addUser(acme.project.id, role, email);
    people[role] = { id, email, cookie: await sessionCookie(stack, id) };
  }
});
afterAll(async () => { await stack?.stop(); });

/** A request of `who`'s browser session in acme (same-origin, as a browser sends it). */
const as = (who: keyof typeof people, method: string, path: string, body?: unknown) =>
  stack.call(method, path, { headers: { cookie: people[who].cookie, origin: stack.url, 'X-Service-Project-Id': acme.project.id }, body });
const roleOf = async (userId: string) =>
  (await stack.sql.query('SELECT role, group_id FROM memberships WHERE project_id = $1 AND user_id = $2', [acme.project.id, userId])).rows[0];

describe('reading', () => {
  test('any member lists the members with their roles; a key needs members:read', async () => {
    const r = await as('member', 'GET', '/api/v1/members');
    expect(r.status).toBe(200);
    expect(r.body.members.map((m: any) => [m.email, m.role])).toEqual([
      [people.owner.email, 'owner'], [people.admin.email, 'admin'], [people.member.email, 'member'],
    ]);
    expect(r.body.members[0]).toMatchObject({ user_id: people.owner.id, group_id: null, email_verified: false });
    expect((await stack.call('GET', '/api/v1/members', { token: (await acme.key(['members:read'])).token })).status).toBe(200);
    expect((await stack.call('GET', '/api/v1/members', { token: (await acme.key(['emails:read'])).token })).body)
      .toEqual({ error: 'no access to members in this project' });
  });

  test('a member of another project is refused', async () => {
    const globex = await seedProject(stack, admin, 'globex');
    const cookie = await sessionCookie(stack, globex.user.id);
    const r = await stack.call('GET', '/api/v1/members', { headers: { cookie, 'X-Service-Project-Id': acme.project.id } });
    expect(r).toMatchObject({ status: 403, body: { error: 'not a member of this project' } });
  });
});

describe('roles', () => {
  test('a member is refused an admin action, and nothing changes', async () => {
    const r = await as('member', 'PATCH', `/api/v1/members/${people.admin.id}`, { role: 'member' });
    expect(r).toMatchObject({ status: 403, body: { error: 'project admin role required' } });
    expect((await as('member', 'POST', '/api/v1/member-groups', { name: 'sneaky', permissions: ['emails:read'] })).status).toBe(403);
    expect(await roleOf(people.admin.id)).toMatchObject({ role: 'admin' });
    expect((await stack.sql.query(`SELECT 1 FROM member_groups WHERE name = 'sneaky'`)).rowCount).toBe(0);
  });

  test('an admin changes a member but cannot grant owner or touch an owner; an owner can', async () => {
    const made = await seedUser('promoted@acme.example', 'member');
    let r = await as('admin', 'PATCH', `/api/v1/members/${made}`, { role: 'admin' });
    expect(r.status).toBe(200);
    expect(r.body.member).toMatchObject({ user_id: made, role: 'admin', email: 'promoted@acme.example' });

    r = await as('admin', 'PATCH', `/api/v1/members/${made}`, { role: 'owner' });
    expect(r).toMatchObject({ status: 403, body: { error: 'project owner role required to change an owner or grant the owner role' } });
    r = await as('admin', 'DELETE', `/api/v1/members/${people.owner.id}`);
    expect(r).toMatchObject({ status: 403, body: { error: 'project owner role required to remove an owner' } });
    expect(await roleOf(made)).toMatchObject({ role: 'admin' });

    r = await as('owner', 'PATCH', `/api/v1/members/${made}`, { role: 'owner' });
    expect(r.body.member.role).toBe('owner');
    // Two owners now: the first may step down, and take it back through the other.
    expect((await as('owner', 'PATCH', `/api/v1/members/${people.owner.id}`, { role: 'admin' })).status).toBe(200);
    const cookie = await sessionCookie(stack, made);
    r = await stack.call('PATCH', `/api/v1/members/${people.owner.id}`, { headers: { cookie, origin: stack.url, 'X-Service-Project-Id': acme.project.id }, body: { role: 'owner' } });
    expect(r.body.member.role).toBe('owner');
    expect((await as('owner', 'DELETE', `/api/v1/members/${made}`)).status).toBe(204);
    expect(await roleOf(made)).toBeUndefined();
  });

  test('the last owner can be neither demoted, removed, nor leave: 409, nothing changed', async () => {
    let r = await as('owner', 'PATCH', `/api/v1/members/${people.owner.id}`, { role: 'admin' });
    expect(r).toMatchObject({ status: 409, body: { error: 'the last owner of a project cannot be demoted: make another member owner first' } });
    r = await as('owner', 'DELETE', `/api/v1/members/${people.owner.id}`);
    expect(r).toMatchObject({ status: 409, body: { error: 'the last owner of a project cannot leave or be removed: make another member owner first' } });
    r = await as('owner', 'POST', '/api/v1/members/leave');
    expect(r.status).toBe(409);
    // A platform credential is owner-equivalent, and still meets the same rule.
    r = await stack.call('PATCH', `/api/v1/members/${people.owner.id}`, { token: admin, headers: { 'X-Service-Project-Id': acme.project.id }, body: { role: 'member' } });
    expect(r.status).toBe(409);
    expect(await roleOf(people.owner.id)).toMatchObject({ role: 'owner' });
  });

  test('two owners demoting each other at once: one wins, one owner remains', async () => {
    const second = await seedUser('second-owner@acme.example', 'owner');
    const secondCookie = await sessionCookie(stack, second);
    const [a, b] = await Promise.all([
      as('owner', 'PATCH', `/api/v1/members/${second}`, { role: 'member' }),
      stack.call('PATCH', `/api/v1/members/${people.owner.id}`, { headers: { cookie: secondCookie, origin: stack.url, 'X-Service-Project-Id': acme.project.id }, body: { role: 'member' } }),
    ]);
    // The loser is refused either way: 409 if its check ran while it was still an owner, 403 if the winner's
    // demotion committed before its request was authorised (it is no longer an owner then).
    const statuses = [a.status, b.status].sort();
    expect(statuses[0]).toBe(200);
    expect([403, 409]).toContain(statuses[1]);
    const { rows } = await stack.sql.query(`SELECT user_id FROM memberships WHERE project_id = $1 AND role = 'owner'`, [acme.project.id]);
    expect(rows).toHaveLength(1);
    // Back as it was for the tests after this one.
    if (rows[0].user_id !== people.owner.id) {
      await stack.sql.query(`UPDATE memberships SET role = 'owner' WHERE project_id = $1 AND user_id = $2`, [acme.project.id, people.owner.id]);
    }
    await stack.sql.query('DELETE FROM memberships WHERE project_id = $1 AND user_id = $2', [acme.project.id, second]);
  });

  test('unknown members are 404; an empty change is 400', async () => {
    expect((await as('admin', 'PATCH', `/api/v1/members/${crypto.randomUUID()}`, { role: 'admin' })).status).toBe(404);
    expect((await as('admin', 'DELETE', `/api/v1/members/${crypto.randomUUID()}`)).status).toBe(404);
    expect((await as('admin', 'PATCH', `/api/v1/members/${people.member.id}`, {})).status).toBe(400);
    expect((await as('admin', 'PATCH', `/api/v1/members/${people.member.id}`, { role: 'emperor' })).status).toBe(400);
  });

  test('leaving moves the default project to another membership', async () => {
    const other = await seedProject(stack, admin, 'initech');
    const id = await seedUser('leaver@acme.example', 'member');
    await stack.sql.query(`INSERT INTO memberships (project_id, user_id, role) VALUES ($1, $2, 'member')`, [other.project.id, id]);
    const cookie = await sessionCookie(stack, id);
    const r = await stack.call('POST', '/api/v1/members/leave', { headers: { cookie, origin: stack.url, 'X-Service-Project-Id': acme.project.id } });
    expect(r.status).toBe(204);
    expect(await roleOf(id)).toBeUndefined();
    expect((await stack.sql.query('SELECT default_project_id FROM users WHERE id = $1', [id])).rows[0].default_project_id).toBe(other.project.id);
    // A key has no membership to leave.
    const key = await acme.key(['*']);
    expect((await stack.call('POST', '/api/v1/members/leave', { token: key.token })).status).toBe(400);
  });
});

describe('custom member groups', () => {
  test('* and unknown entries are refused naming them, before the table is reached', async () => {
    let r = await as('admin', 'POST', '/api/v1/member-groups', { name: 'everything', permissions: ['*'] });
    expect(r.status).toBe(400);
    expect(r.body.error).toContain('wildcard * is not allowed in a member group');
    r = await as('admin', 'POST', '/api/v1/member-groups', { name: 'typo', permissions: ['emails:read', 'emails:rread'] });
    expect(r.status).toBe(400);
    expect(r.body.error).toContain('unknown permission: emails:rread');
    r = await as('admin', 'POST', '/api/v1/member-groups', { name: 'owners', permissions: ['project:delete'] });
    expect(r.body.error).toContain('permission project:delete cannot be granted to a member group');
    expect((await stack.sql.query('SELECT count(*)::int AS n FROM member_groups')).rows[0].n).toBe(0);
  });

  test('a member in a group holds the group\'s list; deleting the group returns them to the role', async () => {
    let r = await as('admin', 'POST', '/api/v1/member-groups', { name: 'readers', permissions: ['emails:read', 'emails:read'] });
    expect(r.status).toBe(201);
    const group = r.body.member_group;
    expect(group).toMatchObject({ name: 'readers', permissions: ['emails:read'], members: 0, project_id: acme.project.id });
    expect((await as('admin', 'POST', '/api/v1/member-groups', { name: 'readers' })).status).toBe(409);

    expect((await as('member', 'GET', '/api/v1/domains')).status).toBe(200);
    r = await as('admin', 'PATCH', `/api/v1/members/${people.member.id}`, { group_id: group.id });
    expect(r.body.member.group_id).toBe(group.id);
    expect((await as('member', 'GET', '/api/v1/domains')).body).toEqual({ error: 'no access to domains in this project' });

    r = await as('admin', 'PATCH', `/api/v1/member-groups/${group.id}`, { permissions: ['emails:read', 'domains:read'] });
    expect(r.body.member_group).toMatchObject({ permissions: ['emails:read', 'domains:read'], members: 1 });
    expect((await as('member', 'GET', '/api/v1/domains')).status).toBe(200);
    expect((await as('member', 'GET', '/api/v1/member-groups')).body.member_groups.map((g: any) => g.name)).toEqual(['readers']);

    expect((await as('admin', 'DELETE', `/api/v1/member-groups/${group.id}`)).status).toBe(204);
    expect(await roleOf(people.member.id)).toEqual({ role: 'member', group_id: null });
    expect((await as('admin', 'DELETE', `/api/v1/member-groups/${group.id}`)).status).toBe(404);
  });

  test('a group of another project cannot be given', async () => {
    const globex = await seedProject(stack, admin, 'hooli');
    const r = await stack.call('POST', '/api/v1/member-groups', { token: admin, headers: { 'X-Service-Project-Id': globex.project.id }, body: { name: 'theirs' } });
    const patch = await as('admin', 'PATCH', `/api/v1/members/${people.member.id}`, { group_id: r.body.member_group.id });
    expect(patch).toMatchObject({ status: 400, body: { error: 'group_id: no such member group in this project' } });
    expect(await roleOf(people.member.id)).toEqual({ role: 'member', group_id: null });
  });
});

test('every change is in the project\'s audit trail, naming the member who made it', async () => {
  const before = await settledAuditEvents(stack, admin);
  const id = await seedUser('audited@acme.example', 'member');
  const made = await as('admin', 'POST', '/api/v1/member-groups', { name: 'audited', permissions: [] });
  await as('admin', 'PATCH', `/api/v1/member-groups/${made.body.member_group.id}`, { name: 'audited-2' });
  await as('admin', 'PATCH', `/api/v1/members/${id}`, { role: 'admin' });
  await as('admin', 'DELETE', `/api/v1/members/${id}`);
  await as('admin', 'DELETE', `/api/v1/member-groups/${made.body.member_group.id}`);
  await as('member', 'PATCH', `/api/v1/members/${people.admin.id}`, { role: 'member' }); // refused: not recorded
  const events = addedEvents(before, await settledAuditEvents(stack, admin));
  expect(events.map((e) => [e.type, e.category, e.project_id, e.actor_email])).toEqual([
    ['membergroup.created', 'project', acme.project.id, people.admin.email],
    ['membergroup.updated', 'project', acme.project.id, people.admin.email],
    ['member.updated', 'project', acme.project.id, people.admin.email],
    ['member.deleted', 'project', acme.project.id, people.admin.email],
    ['membergroup.deleted', 'project', acme.project.id, people.admin.email],
  ]);
});

async function seedUser(email: string, role: string) {
  return addUser(acme.project.id, role, email);
}
