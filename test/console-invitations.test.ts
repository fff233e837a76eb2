// Invitations by mail (docs/console.md, "Invitations"): an owner invites an
// address, the mail goes through our own sending path (a real relay node
// delivers it into its capture directory, as under `pnpm dev`), the link's
// token makes the account, the new member signs in; a token reused, expired,
// revoked or unknown is refused the same way and changes nothing.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RelayNode } from '../relay-node/src/index.js';
import { writeNodeState } from '../relay-node/src/state/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog } from '../relay-node/test-support/inbound-harness.js';
import { enroll, makeInstallationWide } from './support/relay.js';
import { startTestNode } from './support/relay-node.js';
import { platformToken, seedProject, sessionCookie, startTestStack, type SeededProject, type TestStack } from './support/stack.js';
import { addedEvents, settledAuditEvents } from './support/audit.js';
import { eventually } from './support/wait.js';

const SYSTEM_MAIL_PROJECT = '00000000-0000-4000-8000-00000000e0a1';
const REFUSED = { error: 'invalid, expired or already used invitation token', fields: { token: 'invalid, expired or already used' } };

let stack: TestStack;
let dns: TestDnsServer;
let node: RelayNode;
let stateDir: string;
let admin: string;
let acme: SeededProject;
let ownerCookie: string;

beforeAll(async () => {
  // Accepting counts against the login limiter (tested in console-password-reset): more than its 10 a minute here.
  stack = await startTestStack({ settings: { SERVICE_CONSOLE_MAIL_FROM: 'Acme Console <console@mail.acme.example>', SERVICE_RATELIMIT_RELAY_NODE_CHATTER_PER_MINUTE: '100000', SERVICE_RATELIMIT_LOGIN_PER_MINUTE: '1000' } });
  admin = await platformToken(stack);
  acme = await seedProject(stack, admin, 'acme');
  ownerCookie = await sessionCookie(stack, acme.user.id);
  // An installation-wide node (as `pnpm dev`'s) with a capture directory: it delivers system mail there.
  dns = await startDnsServer();
  const enrolled = await enroll(stack, (await acme.key(['relay:write'])).token);
  await makeInstallationWide(stack, enrolled.id);
  stateDir = mkdtempSync(join(tmpdir(), 'edgemail-invitations-'));
  await writeNodeState(stateDir, { edge_url: stack.url, node_id: enrolled.id, name: 'invitations-test', token: enrolled.token, enrolled_at: new Date().toISOString() });
  node = await startTestNode({ stack, stateDir, dnsAddress: dns.address, log: collectingLog([]), env: { SERVICE_OUTBOUND_CAPTURE_DIR: join(stateDir, 'capture') } });
}, 60_000);
afterAll(async () => {
  await node?.stop();
  await dns?.close();
  await stack?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

const asOwner = (method: string, path: string, body?: unknown) =>
  stack.call(method, path, { headers: { cookie: ownerCookie, origin: stack.url, 'X-Service-Project-Id': acme.project.id }, body });
const accept = (body: unknown) => stack.call('POST', '/app/api/invitations/accept', { headers: { origin: stack.url }, body });
const counts = async () => (await stack.sql.query(`SELECT (SELECT count(*) FROM users)::int AS users, (SELECT count(*) FROM memberships)::int AS memberships,
  (SELECT count(*) FROM invitations WHERE accepted_at IS NOT NULL)::int AS accepted`)).rows[0];

/** The token in the newest system mail to `address`, as stored for delivery. */
async function mailedToken(address: string): Promise<{ token: string; emailId: string; text: string }> {
  const { rows } = await stack.sql.query(
    `SELECT e.id, m.text FROM emails e JOIN outbound_messages m ON m.id = e.message_id
     WHERE e.recipient = $1 AND m.origin = 'system' ORDER BY m.created_at DESC LIMIT 1`, [address]);
  expect(rows, `no mail to ${address}`).toHaveLength(1);
  return { token: /#token=([A-Za-z0-9_-]+)/.exec(rows[0].text)![1]!, emailId: rows[0].id, text: rows[0].text };
}

async function invite(email: string, role = 'member') {
  const r = await asOwner('POST', '/api/v1/invitations', { email, role });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.invitation;
}

describe('invite, mail, accept, sign in', () => {
  test('Ada is invited as admin, the relay node delivers the mail, she sets her password and signs in', async () => {
    const invitation = await invite('Ada@Acme.Example', 'admin');
    expect(invitation).toMatchObject({ email: 'ada@acme.example', role: 'admin', project_id: acme.project.id, invited_by: acme.user.id, group_id: null });
    expect(JSON.stringify(invitation)).not.toContain('token');

    // The system mail: its own project (no tenant's log or quota), the configured From, delivered by the node.
    const { token, emailId, text } = await mailedToken('ada@acme.example');
    // The link opens the console page under `server.public_url`, the token after `#` (never sent to a server).
    expect(text).toMatch(new RegExp(`Accept the invitation: https?://[^/\\s]+/app/invitation#token=${token}\\n`));
    const { rows: [stored] } = await stack.sql.query('SELECT token_hash FROM invitations WHERE id = $1', [invitation.id]);
    expect(stored.token_hash).toBe(createHash('sha256').update(token).digest('hex'));
    const { rows: [row] } = await stack.sql.query('SELECT e.project_id, m."from" FROM emails e JOIN outbound_messages m ON m.id = e.message_id WHERE e.id = $1', [emailId]);
    expect(row).toEqual({ project_id: SYSTEM_MAIL_PROJECT, from: 'Acme Console <console@mail.acme.example>' });
    expect((await asOwner('GET', '/api/v1/emails')).body.emails).toEqual([]);
    // The directory is made with the first capture.
    const captured = async () => (existsSync(join(stateDir, 'capture')) ? readdirSync(join(stateDir, 'capture')) : []).find((f) => f.startsWith(emailId));
    const eml = await eventually(captured, (f) => f !== undefined, 15_000);
    const delivered = readFileSync(join(stateDir, 'capture', eml!), 'utf8');
    expect(delivered).toMatch(/^From: Acme Console <console@mail\.acme\.example>/m);
    expect(delivered).toMatch(/^To: ada@acme\.example/m);
    expect(delivered).toMatch(/^DKIM-Signature: v=1; a=rsa-sha256; .*d=mail\.acme\.example;/m);
    // The text part is quoted-printable: decoded, it holds the link.
    const decoded = delivered.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    expect(decoded).toContain(`/app/invitation#token=${token}`);

    // A password that breaks the rule changes nothing, and the link still works.
    const before = await counts();
    let r = await accept({ token, password: 'short' });
    expect(r).toMatchObject({ status: 400, body: { error: 'password: must be at least 10 characters' } });
    expect(await counts()).toEqual(before);

    r = await accept({ token, password: 'correct horse battery', name: 'Ada Lovelace' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({ user_id: expect.any(String), project_id: acme.project.id, role: 'admin', account_created: true });
    const { rows: [ada] } = await stack.sql.query('SELECT name, email_verified_at, default_project_id FROM users WHERE id = $1', [r.body.user_id]);
    expect(ada).toMatchObject({ name: 'Ada Lovelace', email_verified_at: expect.any(Date), default_project_id: acme.project.id });

    const signIn = await stack.call('POST', '/app/api/session', { headers: { origin: stack.url }, body: { email: 'ada@acme.example', password: 'correct horse battery' } });
    expect(signIn.status, JSON.stringify(signIn.body)).toBe(200);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    // Her session lands in her default project with the invited role.
    const members = await stack.call('GET', '/api/v1/members', { headers: { cookie } });
    expect(members.body.members.find((m: any) => m.email === 'ada@acme.example')).toMatchObject({ role: 'admin', email_verified: true });

    // Used once: the same refusal, nothing changed.
    const after = await counts();
    expect(await accept({ token, password: 'another good password' })).toMatchObject({ status: 400, body: REFUSED });
    expect(await counts()).toEqual(after);
  });

  test('an address with an account joins without a password; a password for it is refused', async () => {
    const globex = await seedProject(stack, admin, 'globex');
    await invite(globex.user.email);
    const { token } = await mailedToken(globex.user.email);
    const before = await counts();
    let r = await accept({ token, password: 'a new password here' });
    expect(r.status).toBe(400);
    expect(r.body.fields).toEqual({ password: 'not accepted for an existing account' });
    expect(await counts()).toEqual(before);
    r = await accept({ token });
    expect(r.body).toEqual({ user_id: globex.user.id, project_id: acme.project.id, role: 'member', account_created: false });
    // Their default project stays the one they had.
    expect((await stack.sql.query('SELECT default_project_id FROM users WHERE id = $1', [globex.user.id])).rows[0].default_project_id).toBe(globex.project.id);
    expect((await asOwner('POST', '/api/v1/invitations', { email: globex.user.email })).status).toBe(409);
  });
});

describe('refused tokens: the same 400, nothing changed', () => {
  test('expired, revoked, replaced and unknown', async () => {
    await invite('late@acme.example');
    const late = await mailedToken('late@acme.example');
    await stack.sql.query(`UPDATE invitations SET expires_at = now() - interval '1 second' WHERE email = 'late@acme.example'`);

    const revoked = await invite('revoked@acme.example');
    const revokedToken = (await mailedToken('revoked@acme.example')).token;
    expect((await asOwner('DELETE', `/api/v1/invitations/${revoked.id}`)).status).toBe(204);
    expect((await asOwner('DELETE', `/api/v1/invitations/${revoked.id}`)).status).toBe(404);

    await invite('twice@acme.example');
    const first = (await mailedToken('twice@acme.example')).token;
    await invite('twice@acme.example', 'admin');
    const second = (await mailedToken('twice@acme.example')).token;
    const pending = (await asOwner('GET', '/api/v1/invitations')).body.invitations;
    expect(pending.filter((i: any) => i.email === 'twice@acme.example')).toEqual([expect.objectContaining({ role: 'admin' })]);
    expect(pending.map((i: any) => i.email)).not.toContain('late@acme.example');

    const before = await counts();
    for (const token of [late.token, revokedToken, first, 'not-a-token-at-all']) {
      expect(await accept({ token, password: 'correct horse battery' })).toMatchObject({ status: 400, body: REFUSED });
    }
    expect(await counts()).toEqual(before);
    const r = await accept({ token: second, password: 'correct horse battery' });
    expect([r.status, r.body.role], JSON.stringify(r.body)).toEqual([200, 'admin']);
  });
});

describe('who may invite', () => {
  test('a member is refused; an admin may not invite an owner; a key needs members:write', async () => {
    const { rows: [m] } = await stack.sql.query(`INSERT INTO users (email) VALUES ('plain@acme.example') RETURNING id`);
    await stack.sql.query(`INSERT INTO memberships (project_id, user_id, role) VALUES ($1, $2, 'member')`, [acme.project.id, m.id]);
    const memberCookie = await sessionCookie(stack, m.id);
    const headers = { cookie: memberCookie, origin: stack.url, 'X-Service-Project-Id': acme.project.id };
    expect(await stack.call('POST', '/api/v1/invitations', { headers, body: { email: 'x@acme.example' } }))
      .toMatchObject({ status: 403, body: { error: 'project admin role required' } });
    await stack.sql.query(`UPDATE memberships SET role = 'admin' WHERE user_id = $1`, [m.id]);
    expect(await stack.call('POST', '/api/v1/invitations', { headers, body: { email: 'x@acme.example', role: 'owner' } }))
      .toMatchObject({ status: 403, body: { error: 'project owner role required to invite an owner' } });
    expect((await stack.sql.query(`SELECT 1 FROM invitations WHERE email = 'x@acme.example'`)).rowCount).toBe(0);

    const reader = await acme.key(['members:read']);
    expect((await stack.call('POST', '/api/v1/invitations', { token: reader.token, body: { email: 'x@acme.example' } })).status).toBe(403);
    const writer = await acme.key(['members:write']);
    expect((await stack.call('POST', '/api/v1/invitations', { token: writer.token, body: { email: 'x@acme.example' } })).body.invitation.invited_by).toBeNull();
    expect((await stack.call('POST', '/api/v1/invitations', { token: writer.token, body: { email: 'not an address' } })).status).toBe(400);
  });

  test('the invitation and its acceptance are in the project\'s audit trail', async () => {
    const before = await settledAuditEvents(stack, admin);
    await invite('audited@acme.example');
    const r = await accept({ token: (await mailedToken('audited@acme.example')).token, password: 'correct horse battery' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const events = addedEvents(before, await settledAuditEvents(stack, admin));
    expect(events.map((e) => [e.type, e.category, e.project_id, e.actor_id, e.actor_email])).toEqual([
      ['invitation.created', 'project', acme.project.id, acme.user.id, acme.user.email],
      ['invitation.accepted', 'project', acme.project.id, r.body.user_id, 'audited@acme.example'],
    ]);
  });
});
