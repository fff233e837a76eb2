// API key lifecycle and the role gates of sessions (spec "API keys", item 11).
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { platformToken, seedProject, sessionCookie, startTestStack, type TestStack } from './support/stack.js';

const CONSOLE_ORIGIN = 'https://console.example.com';
let stack: TestStack;
let admin: string;
let tenant: Awaited<ReturnType<typeof seedProject>>;

beforeAll(async () => {
  stack = await startTestStack({ settings: { SERVICE_CORS_ALLOWED_ORIGINS: CONSOLE_ORIGIN } });
  admin = await platformToken(stack);
  tenant = await seedProject(stack, admin);
});
afterAll(async () => { await stack?.stop(); });

const asAdmin = () => ({ token: admin, headers: { 'X-Service-Project-Id': tenant.project.id } });

/** A user with a membership of `role` in the tenant project, signed in. */
async function member(role: 'owner' | 'admin' | 'member', groupPermissions?: string[]) {
  const { rows: [user] } = await stack.sql.query(`INSERT INTO users (email) VALUES ($1) RETURNING id`, [`${crypto.randomUUID()}@example.com`]);
  let groupId: string | null = null;
  if (groupPermissions) {
    const { rows: [group] } = await stack.sql.query(`INSERT INTO member_groups (project_id, name, permissions) VALUES ($1, $2, $3) RETURNING id`, [tenant.project.id, crypto.randomUUID(), groupPermissions]);
    groupId = group.id;
  }
  await stack.sql.query(`INSERT INTO memberships (project_id, user_id, role, group_id) VALUES ($1, $2, $3, $4)`, [tenant.project.id, user.id, role, groupId]);
  const cookie = await sessionCookie(stack, user.id);
  const headers = { cookie, 'X-Service-Project-Id': tenant.project.id, origin: stack.url };
  return { userId: user.id as string, cookie, headers };
}

describe('create', () => {
  test('returns 201 with the record and a token shown once; only its hash is stored', async () => {
    const r = await stack.call('POST', '/api/v1/api-keys', { ...asAdmin(), body: { name: 'sender', permissions: ['emails:write', 'emails:read'], allowed_ips: ['203.0.113.0/24'] } });
    expect(r.status).toBe(201);
    const { api_key, token } = r.body;
    expect(token).toMatch(/^myk_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/);
    expect(api_key).toMatchObject({
      project_id: tenant.project.id, name: 'sender', key_prefix: token.slice(0, 12),
      permissions: ['emails:write', 'emails:read'], allowed_ips: ['203.0.113.0/24'], revoked: false, sandbox: false, expires_at: null, last_used_at: null,
    });
    expect(new Date(api_key.created_at).toISOString()).toBe(api_key.created_at);
    const { rows: [row] } = await stack.sql.query('SELECT * FROM api_keys WHERE id = $1', [api_key.id]);
    expect(row.key_hash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(token.slice(13));
  });

  test('apikeys:write can mint any permission, including *, which still cannot reach the admin surface', async () => {
    const minter = await tenant.key(['apikeys:write']);
    const r = await stack.call('POST', '/api/v1/api-keys', { token: minter.token, body: { name: 'all', permissions: ['*'] } });
    expect(r.status).toBe(201);
    expect(r.body.api_key.project_id).toBe(tenant.project.id); // a key names its own project
    const admin403 = await stack.call('GET', '/api/v1/admin/users', { token: r.body.token });
    expect(admin403.status).toBe(403);
    expect(admin403.body).toEqual({ error: 'admin privileges required' });
  });

  test('expires_at and sandbox are kept', async () => {
    const expires = new Date(Date.now() + 86_400_000).toISOString();
    const r = await stack.call('POST', '/api/v1/api-keys', { ...asAdmin(), body: { name: 'sandboxed', sandbox: true, expires_at: expires } });
    expect(r.status).toBe(201);
    expect(r.body.api_key).toMatchObject({ sandbox: true, expires_at: expires, permissions: [] });
  });
});

describe('list', () => {
  test('newest first, prefixes only, revoked keys stay listed', async () => {
    const a = await tenant.key(['apikeys:read']);
    const b = await tenant.key(['apikeys:read']);
    await stack.call('POST', `/api/v1/api-keys/${a.api_key.id}/revoke`, asAdmin());
    const r = await stack.call('GET', '/api/v1/api-keys', { token: b.token });
    expect(r.status).toBe(200);
    const ids = r.body.api_keys.map((k: { id: string }) => k.id);
    expect(ids.indexOf(b.api_key.id)).toBeLessThan(ids.indexOf(a.api_key.id));
    expect(r.body.api_keys.find((k: { id: string }) => k.id === a.api_key.id).revoked).toBe(true);
    const text = JSON.stringify(r.body);
    expect(text).not.toContain(a.token);
    expect(text).not.toContain(b.token);
    expect(text).not.toContain('key_hash');
  });

  test('shows only the caller\'s project', async () => {
    const other = await seedProject(stack, admin, 'other');
    const foreign = await other.key(['apikeys:read']);
    const mine = await tenant.key(['apikeys:read']);
    const r = await stack.call('GET', '/api/v1/api-keys', { token: mine.token });
    expect(r.body.api_keys.map((k: { id: string }) => k.id)).not.toContain(foreign.api_key.id);
    expect(r.body.api_keys.every((k: { project_id: string }) => k.project_id === tenant.project.id)).toBe(true);
  });
});

describe('revoke and delete', () => {
  test('a key is judged on apikeys:write to revoke and apikeys:delete to delete', async () => {
    const target = await tenant.key([]);
    const reader = await tenant.key(['apikeys:read']);
    const r1 = await stack.call('POST', `/api/v1/api-keys/${target.api_key.id}/revoke`, { token: reader.token });
    expect(r1.status).toBe(403);
    expect(r1.body).toEqual({ error: 'permission apikeys:write required' });
    const r2 = await stack.call('DELETE', `/api/v1/api-keys/${target.api_key.id}`, { token: reader.token });
    expect(r2.status).toBe(403);
    expect(r2.body).toEqual({ error: 'permission apikeys:delete required' });

    const manager = await tenant.key(['apikeys:write', 'apikeys:delete']);
    expect((await stack.call('POST', `/api/v1/api-keys/${target.api_key.id}/revoke`, { token: manager.token })).status).toBe(200);
    expect((await stack.call('DELETE', `/api/v1/api-keys/${target.api_key.id}`, { token: manager.token })).status).toBe(204);
    expect((await stack.sql.query('SELECT 1 FROM api_keys WHERE id = $1', [target.api_key.id])).rowCount).toBe(0);
  });

  test('unknown ids and other projects\' keys are 404 and untouched', async () => {
    const other = await seedProject(stack, admin, 'elsewhere');
    const foreign = await other.key(['apikeys:read']);
    const manager = await tenant.key(['apikeys:write', 'apikeys:delete']);
    for (const id of [crypto.randomUUID(), foreign.api_key.id]) {
      const r1 = await stack.call('POST', `/api/v1/api-keys/${id}/revoke`, { token: manager.token });
      expect(r1.status).toBe(404);
      expect(r1.body).toEqual({ error: 'API key not found' });
      expect((await stack.call('DELETE', `/api/v1/api-keys/${id}`, { token: manager.token })).status).toBe(404);
    }
    expect((await stack.call('GET', '/api/v1/api-keys', { token: foreign.token })).status).toBe(200);
  });
});

describe('sessions and role gates', () => {
  test('any member lists keys; only admins revoke and delete', async () => {
    const plain = await member('member');
    expect((await stack.call('GET', '/api/v1/api-keys', { headers: plain.headers })).status).toBe(200);
    const target = await tenant.key([]);
    const r = await stack.call('POST', `/api/v1/api-keys/${target.api_key.id}/revoke`, { headers: plain.headers });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: 'project admin role required' });
    expect((await stack.call('DELETE', `/api/v1/api-keys/${target.api_key.id}`, { headers: plain.headers })).status).toBe(403);
    const created = await stack.call('POST', '/api/v1/api-keys', { headers: plain.headers, body: { name: 'nope' } });
    expect(created.status).toBe(403);
    expect(created.body).toEqual({ error: 'permission apikeys:write required' });

    const boss = await member('admin');
    expect((await stack.call('POST', `/api/v1/api-keys/${target.api_key.id}/revoke`, { headers: boss.headers })).status).toBe(200);
    expect((await stack.call('DELETE', `/api/v1/api-keys/${target.api_key.id}`, { headers: boss.headers })).status).toBe(204);
  });

  test('a session creates the first key in the project of the header, or its default project', async () => {
    const owner = await member('owner');
    const r = await stack.call('POST', '/api/v1/api-keys', { headers: owner.headers, body: { name: 'first', permissions: ['*'] } });
    expect(r.status).toBe(201);
    expect(r.body.api_key.project_id).toBe(tenant.project.id);

    // The seeded owner has the tenant as default project: no header needed.
    const cookie = await sessionCookie(stack, tenant.user.id);
    const r2 = await stack.call('GET', '/api/v1/api-keys', { headers: { cookie } });
    expect(r2.status).toBe(200);
  });

  test('custom groups hold their own permission lists and never *', async () => {
    const reader = await member('member', ['apikeys:read', 'apikeys:write']);
    const created = await stack.call('POST', '/api/v1/api-keys', { headers: reader.headers, body: { name: 'by-group' } });
    expect(created.status).toBe(201);
    const outsider = await member('member', ['webhooks:read']);
    const r = await stack.call('POST', '/api/v1/api-keys', { headers: outsider.headers, body: { name: 'refused' } });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: 'no access to apikeys in this project' });
    const { rows } = await stack.sql.query(`SELECT name FROM api_keys WHERE project_id = $1 AND name IN ('by-group', 'refused')`, [tenant.project.id]);
    expect(rows).toEqual([{ name: 'by-group' }]);
    await expect(stack.sql.query(`INSERT INTO member_groups (project_id, name, permissions) VALUES ($1, 'all', '{*}')`, [tenant.project.id]))
      .rejects.toThrow(/member_groups_no_wildcard/);
  });

  test('listing keys needs only membership: a group without apikeys:read still lists (item 11)', async () => {
    const outsider = await member('member', ['webhooks:read']);
    const r = await stack.call('GET', '/api/v1/api-keys', { headers: outsider.headers });
    expect(r.status).toBe(200);
    expect(r.body.api_keys.length).toBeGreaterThan(0);
    // Keys are still judged on the permission.
    const key = await tenant.key(['webhooks:read']);
    const refused = await stack.call('GET', '/api/v1/api-keys', { token: key.token });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: 'no access to apikeys in this project' });
  });

  test('a membership cannot take a member group of another project', async () => {
    const other = await seedProject(stack, admin, 'elsewhere');
    const { rows: [group] } = await stack.sql.query(`INSERT INTO member_groups (project_id, name, permissions) VALUES ($1, 'writers', '{apikeys:write}') RETURNING id`, [other.project.id]);
    const { rows: [user] } = await stack.sql.query(`INSERT INTO users (email) VALUES ($1) RETURNING id`, [`${crypto.randomUUID()}@example.com`]);
    await expect(stack.sql.query(`INSERT INTO memberships (project_id, user_id, role, group_id) VALUES ($1, $2, 'member', $3)`, [tenant.project.id, user.id, group.id]))
      .rejects.toThrow(/memberships_group_same_project_fk/);
    const own = await member('member', ['apikeys:read']);
    await expect(stack.sql.query(`UPDATE memberships SET group_id = $1 WHERE user_id = $2`, [group.id, own.userId]))
      .rejects.toThrow(/memberships_group_same_project_fk/);
    // Deleting a group still releases its members (group_id set to null).
    const { rows: [ownGroup] } = await stack.sql.query(`SELECT group_id FROM memberships WHERE user_id = $1`, [own.userId]);
    await stack.sql.query(`DELETE FROM member_groups WHERE id = $1`, [ownGroup.group_id]);
    expect((await stack.sql.query(`SELECT group_id FROM memberships WHERE user_id = $1`, [own.userId])).rows).toEqual([{ group_id: null }]);
  });

  test('the session look-up grants nothing from a group of another project, even if such a row exists', async () => {
    const other = await seedProject(stack, admin, 'elsewhere-2');
    const { rows: [group] } = await stack.sql.query(`INSERT INTO member_groups (project_id, name, permissions) VALUES ($1, 'writers', '{apikeys:write}') RETURNING id`, [other.project.id]);
    const restricted = await member('member', ['webhooks:read']);
    // Bypass the schema's guard, as a row written before it existed would.
    const client = await stack.sql.connect();
    try {
      await client.query('BEGIN');
      await client.query('ALTER TABLE memberships DROP CONSTRAINT memberships_group_same_project_fk');
      await client.query(`UPDATE memberships SET group_id = $1 WHERE user_id = $2`, [group.id, restricted.userId]);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    try {
      const r = await stack.call('POST', '/api/v1/api-keys', { headers: restricted.headers, body: { name: 'smuggled' } });
      expect(r.status).toBe(403);
      // Not even the member role's own list (which would say `permission apikeys:write required`).
      expect(r.body).toEqual({ error: 'no access to apikeys in this project' });
    } finally {
      await stack.sql.query(`UPDATE memberships SET group_id = NULL WHERE user_id = $1`, [restricted.userId]);
      await stack.sql.query(`ALTER TABLE memberships ADD CONSTRAINT memberships_group_same_project_fk FOREIGN KEY (group_id, project_id) REFERENCES member_groups (id, project_id)`);
    }
  });

  test('a session in a project it does not belong to gets 403', async () => {
    const other = await seedProject(stack, admin, 'stranger');
    const plain = await member('member');
    const r = await stack.call('GET', '/api/v1/api-keys', { headers: { cookie: plain.cookie, 'X-Service-Project-Id': other.project.id } });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: 'not a member of this project' });
  });

  test('expired and unknown sessions get 401', async () => {
    const plain = await member('member');
    await stack.sql.query(`UPDATE sessions SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [plain.userId]);
    expect((await stack.call('GET', '/api/v1/api-keys', { headers: plain.headers })).status).toBe(401);
    expect((await stack.call('GET', '/api/v1/api-keys', { headers: { cookie: `${stack.sessionCookieName}=nope` } })).status).toBe(401);
  });

  test('session cookies are refused on the admin surface', async () => {
    const owner = await member('owner');
    const r = await stack.call('GET', '/api/v1/admin/users', { headers: owner.headers });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: 'admin privileges required' });
  });
});

describe('cookie Origin check on mutating requests', () => {
  const count = async () => Number((await stack.sql.query('SELECT count(*) FROM api_keys')).rows[0].count);

  test('a foreign or missing Origin is refused and nothing changes', async () => {
    const owner = await member('owner');
    const before = await count();
    for (const origin of ['https://evil.example', undefined]) {
      const headers: Record<string, string> = { cookie: owner.cookie, 'X-Service-Project-Id': tenant.project.id };
      if (origin) headers.origin = origin;
      const r = await stack.call('POST', '/api/v1/api-keys', { headers, body: { name: 'csrf', permissions: ['*'] } });
      expect(r.status).toBe(403);
      expect(r.body.error).toMatch(/cross-origin request refused/);
    }
    expect(await count()).toBe(before);
  });

  test('the host the request arrived on and cors.allowed_origins pass; reads need no Origin', async () => {
    const owner = await member('owner');
    for (const origin of [stack.url, CONSOLE_ORIGIN]) {
      const r = await stack.call('POST', '/api/v1/api-keys', { headers: { ...owner.headers, origin }, body: { name: 'ok' } });
      expect(r.status).toBe(201);
    }
    expect((await stack.call('GET', '/api/v1/api-keys', { headers: { cookie: owner.cookie, 'X-Service-Project-Id': tenant.project.id, origin: 'https://evil.example' } })).status).toBe(200);
  });

  test('a request with an Authorization header skips the check', async () => {
    const minter = await tenant.key(['apikeys:write']);
    const owner = await member('owner');
    const r = await stack.call('POST', '/api/v1/api-keys', { token: minter.token, headers: { cookie: owner.cookie, origin: 'https://evil.example' }, body: { name: 'api' } });
    expect(r.status).toBe(201);
  });
});
