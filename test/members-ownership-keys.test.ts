// Ownership is never taken through a project key (issue 25, "An admin becomes
// owner through a key"; docs/console.md, "Refused to every project key"): an
// admin's session mints a key holding members:write and members:delete, or `*`,
// and with it tries to make itself owner, demote the owner, remove the owner
// and invite an owner. Each is 403 naming the rule, with nothing changed; an
// owner's session and a platform credential still may, and the key still
// changes the people who are not owners.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { platformToken, seedProject, sessionCookie, startTestStack, type SeededProject, type TestStack } from './support/stack.js';

const REFUSAL = 'project keys cannot change ownership: use an owner\'s session or a platform credential';

let stack: TestStack;
let admin: string;
let acme: SeededProject;
let adminUser: { id: string; cookie: string };

async function addUser(email: string, role: string) {
  const { rows: [user] } = await stack.sql.query(`INSERT INTO users (email, default_project_id) VALUES ($1, $2) RETURNING id`, [email, acme.project.id]);
  await stack.sql.query(`INSERT INTO memberships (project_id, user_id, role) VALUES ($1, $2, $3)`, [acme.project.id, user.id, role]);
  return user.id as string;
}

beforeAll(async () => {
  stack = await startTestStack();
  admin = await platformToken(stack);
  acme = await seedProject(stack, admin, 'acme');
  const id = await addUser('admin@acme.example', 'admin');
  adminUser = { id, cookie: await sessionCookie(stack, id) };
});
afterAll(async () => { await stack?.stop(); });

/** The admin's own session mints a key, as the attack does (role admin holds `*`). */
async function adminMintsKey(permissions: string[]): Promise<string> {
  const r = await stack.call('POST', '/api/v1/api-keys', {
    headers: { cookie: adminUser.cookie, origin: stack.url, 'X-Service-Project-Id': acme.project.id },
    body: { name: `admin-${permissions.join(',')}`, permissions },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.token;
}

/** Everyone's role in acme, and every pending invitation: what must not move on a refusal. */
async function people() {
  const { rows: members } = await stack.sql.query(
    'SELECT user_id, role, group_id FROM memberships WHERE project_id = $1 ORDER BY user_id', [acme.project.id]);
  const { rows: invites } = await stack.sql.query('SELECT email, role FROM invitations WHERE project_id = $1 ORDER BY email', [acme.project.id]);
  return { members, invites };
}

const withToken = (token: string, method: string, path: string, body?: unknown) => stack.call(method, path, { token, body });

describe('a project key cannot change ownership, whatever it holds', () => {
  for (const permissions of [['members:write', 'members:delete'], ['*']]) {
    test(`a key holding ${permissions.join(' and ')}: self to owner, demoting and removing the owner, inviting an owner: 403, nothing changed`, async () => {
      const token = await adminMintsKey(permissions);
      const before = await people();
      expect(before.members.filter((m: any) => m.role === 'owner').map((m: any) => m.user_id)).toEqual([acme.user.id]);

      for (const [method, path, body] of [
        ['PATCH', `/api/v1/members/${adminUser.id}`, { role: 'owner' }],
        ['PATCH', `/api/v1/members/${acme.user.id}`, { role: 'member' }],
        ['PATCH', `/api/v1/members/${acme.user.id}`, { role: 'admin' }],
        ['DELETE', `/api/v1/members/${acme.user.id}`, undefined],
        ['POST', '/api/v1/invitations', { email: 'accomplice@elsewhere.example', role: 'owner' }],
      ] as const) {
        const r = await withToken(token, method, path, body);
        expect([method, path, r.status, r.body], JSON.stringify(r.body)).toEqual([method, path, 403, { error: REFUSAL }]);
      }
      expect(await people()).toEqual(before);
    });
  }

  test('with a second owner in place, the key still cannot remove or demote either', async () => {
    const second = await addUser('second-owner@acme.example', 'owner');
    const token = await adminMintsKey(['*']);
    const before = await people();
    expect(await withToken(token, 'DELETE', `/api/v1/members/${second}`)).toMatchObject({ status: 403, body: { error: REFUSAL } });
    expect(await withToken(token, 'PATCH', `/api/v1/members/${second}`, { role: 'admin' })).toMatchObject({ status: 403, body: { error: REFUSAL } });
    expect(await withToken(token, 'PATCH', `/api/v1/members/${acme.user.id}`, { role: 'member' })).toMatchObject({ status: 403, body: { error: REFUSAL } });
    expect(await people()).toEqual(before);
    // The owner's session removes the second owner (back as it was).
    const owner = await sessionCookie(stack, acme.user.id);
    const r = await stack.call('DELETE', `/api/v1/members/${second}`, { headers: { cookie: owner, origin: stack.url, 'X-Service-Project-Id': acme.project.id } });
    expect(r.status).toBe(204);
  });
});

describe('what a key still may, and who may change ownership', () => {
  test('the key changes members who are not owners: a role member → admin, a group, a removal', async () => {
    const token = await adminMintsKey(['members:write', 'members:delete']);
    const id = await addUser('plain@acme.example', 'member');
    let r = await withToken(token, 'PATCH', `/api/v1/members/${id}`, { role: 'admin' });
    expect([r.status, r.body.member?.role]).toEqual([200, 'admin']);
    const group = await stack.call('POST', '/api/v1/member-groups', { token: admin, headers: { 'X-Service-Project-Id': acme.project.id }, body: { name: 'readers', permissions: ['emails:read'] } });
    r = await withToken(token, 'PATCH', `/api/v1/members/${id}`, { role: 'member', group_id: group.body.member_group.id });
    expect(r.body.member).toMatchObject({ role: 'member', group_id: group.body.member_group.id });
    r = await withToken(token, 'POST', '/api/v1/invitations', { email: 'helper@acme.example', role: 'admin' });
    expect([r.status, r.body.invitation?.role]).toEqual([201, 'admin']);
    expect((await withToken(token, 'DELETE', `/api/v1/members/${id}`)).status).toBe(204);
  });

  test('an owner\'s session and a platform credential still grant, demote and remove an owner', async () => {
    const owner = await sessionCookie(stack, acme.user.id);
    const asOwner = (method: string, path: string, body?: unknown) =>
      stack.call(method, path, { headers: { cookie: owner, origin: stack.url, 'X-Service-Project-Id': acme.project.id }, body });
    const asPlatform = (method: string, path: string, body?: unknown) =>
      stack.call(method, path, { token: admin, headers: { 'X-Service-Project-Id': acme.project.id }, body });

    const a = await addUser('made-by-owner@acme.example', 'member');
    expect((await asOwner('PATCH', `/api/v1/members/${a}`, { role: 'owner' })).body.member.role).toBe('owner');
    expect((await asOwner('PATCH', `/api/v1/members/${a}`, { role: 'admin' })).body.member.role).toBe('admin');
    const b = await addUser('made-by-platform@acme.example', 'member');
    expect((await asPlatform('PATCH', `/api/v1/members/${b}`, { role: 'owner' })).body.member.role).toBe('owner');
    expect((await asPlatform('DELETE', `/api/v1/members/${b}`)).status).toBe(204);
    expect((await asOwner('POST', '/api/v1/invitations', { email: 'co-owner@acme.example', role: 'owner' })).status).toBe(201);
    const { rows } = await stack.sql.query(`SELECT user_id FROM memberships WHERE project_id = $1 AND role = 'owner'`, [acme.project.id]);
    expect(rows.map((r: any) => r.user_id)).toEqual([acme.user.id]);
  });
});
