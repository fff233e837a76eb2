// The listener routes (/api/v1/admin/listeners): what each SMTP listener
// presents, assigning and unassigning a certificate, the refusals (each
// changing nothing), the platform-credential gate, a listener with TLS off,
// and the relay nodes' own reports. One stack, with `submission.tls.enabled`
// off, ACME on for one host, and two removed settings set (the boot log names
// them).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { insertCertificate } from './support/certificate-rows.js';
import { addedEvents, settledAuditEvents } from './support/audit.js';
import { eventually } from './support/wait.js';

let stack: TestStack;
let admin: string;

const SETTINGS = {
  SERVICE_SUBMISSION_TLS_ENABLED: 'false',
  SERVICE_ACME_ENABLED: 'true',
  SERVICE_ACME_HOSTS: 'mx.example.net',
  // Removed keys: still accepted, named in the boot log.
  SERVICE_TLS_MODE: 'acme',
  SERVICE_SUBMISSION_TLS_ACME_EMAIL: 'ops@example.com',
};

const generation = async () => Number((await stack.sql.query('SELECT generation FROM tls_state')).rows[0].generation);
const snapshot = async () => ({
  generation: await generation(),
  assignments: (await stack.sql.query('SELECT listener, certificate_id, assigned_at FROM listener_certificates ORDER BY 1')).rows,
  certificates: (await stack.sql.query('SELECT id, name, updated_at FROM certificates ORDER BY name')).rows,
});

const listeners = () => stack.call('GET', '/api/v1/admin/listeners', { token: admin });
const assign = (listener: string, body: unknown) => stack.call('PUT', `/api/v1/admin/listeners/${listener}/certificate`, { token: admin, body });
const unassign = (listener: string) => stack.call('DELETE', `/api/v1/admin/listeners/${listener}/certificate`, { token: admin });

let expiresMx1: string;

beforeAll(async () => {
  stack = await startTestStack({ settings: SETTINGS, captureLogs: true });
  admin = await platformToken(stack);
  await insertCertificate(stack.sql, stack.encryptionKey, { name: 'mx1', kind: 'issued', hosts: ['mx1.example.net'], days: 90 });
  await insertCertificate(stack.sql, stack.encryptionKey, { name: 'root-ca', kind: 'authority', hosts: [], days: 3650 });
  await insertCertificate(stack.sql, stack.encryptionKey, { name: 'old', kind: 'uploaded', hosts: ['old.example.net'], days: -1 });
  expiresMx1 = (await stack.sql.query(`SELECT not_after FROM certificates WHERE name = 'mx1'`)).rows[0].not_after.toISOString();
});
afterAll(async () => { await stack?.stop(); });

describe('the removed settings', () => {
  it('are named in the Worker\'s log, once', async () => {
    expect((await listeners()).status).toBe(200);
    const named = await eventually(async () => stack.logs().filter((l) => l.message.includes('removed settings')), (l) => l.length > 0);
    expect(named.map((l) => [l.level, l.message])).toEqual([['warning', 'removed settings are set and ignored: tls.mode, SERVICE_SUBMISSION_TLS_ACME_EMAIL']]);
  });
});

describe('GET /api/v1/admin/listeners', () => {
  it('with nothing assigned: inbound on ACME for acme.hosts, submission TLS off presenting nothing', async () => {
    const r = await listeners();
    expect(r.status).toBe(200);
    const g = await generation();
    expect(r.body).toEqual({
      listeners: [
        { name: 'inbound', tls: 'on', certificate: null, presents: 'acme', acme_hosts: ['mx.example.net'], generation: g, nodes: [] },
        { name: 'submission', tls: 'off', certificate: null, presents: 'none', acme_hosts: [], generation: g, nodes: [] },
      ],
    });
  });

  it('shows what each installation-wide, unrevoked relay node last reported, from older nodes (one tls report) and newer (per listener)', async () => {
    const { rows: [project] } = await stack.sql.query(`INSERT INTO projects (name) VALUES ('nodes') RETURNING id`);
    const node = async (name: string, wide: boolean, revoked: boolean, listenersReport: unknown[], tls: unknown) =>
      (await stack.sql.query(
        `INSERT INTO relay_nodes (project_id, name, key_prefix, key_hash, installation_wide, revoked, listeners, tls, last_heartbeat_at)
         VALUES ($1, $2, $3, 'x', $4, $5, $6, $7, '2026-01-02T03:04:05Z') RETURNING id`,
        [project.id, name, `myr_${name}`, wide, revoked, JSON.stringify(listenersReport), JSON.stringify(tls)])).rows[0].id;
    const inboundEntry = { name: 'inbound', port: 25, tls: 'starttls', proxy_protocol: false };
    const nodeWide = { source: 'self_signed', not_after: '2027-01-01T00:00:00.000Z' };
    const a = await node('a-node', true, false, [inboundEntry], nodeWide);
    // A newer node: each listener entry says what it presents, and `tls` the generation it holds.
    const presented = { source: 'assigned', certificate: 'mx1', not_after: '2027-02-01T00:00:00.000Z' };
    const newer = [{ ...inboundEntry, certificate: presented }, { name: 'submission', port: 587, tls: 'off', proxy_protocol: false }];
    const b = await node('b-node', true, false, newer, { ...presented, generation: 7 });
    await node('c-project-only', false, false, [inboundEntry], nodeWide);
    await node('d-revoked', true, true, [inboundEntry], nodeWide);
    try {
      const r = await listeners();
      expect(r.status).toBe(200);
      const [inbound, submission] = r.body.listeners;
      const at = '2026-01-02T03:04:05.000Z';
      expect(inbound.nodes).toEqual([
        { node_id: a, name: 'a-node', last_heartbeat_at: at, listener: inboundEntry, tls: nodeWide, generation: null },
        { node_id: b, name: 'b-node', last_heartbeat_at: at, listener: newer[0], tls: presented, generation: 7 },
      ]);
      expect(submission.nodes).toEqual([
        { node_id: a, name: 'a-node', last_heartbeat_at: at, listener: null, tls: nodeWide, generation: null },
        { node_id: b, name: 'b-node', last_heartbeat_at: at, listener: newer[1], tls: null, generation: 7 },
      ]);
    } finally {
      await stack.sql.query('DELETE FROM relay_nodes WHERE project_id = $1', [project.id]);
    }
  });

  it('GET one listener; an unknown one is 404', async () => {
    const one = await stack.call('GET', '/api/v1/admin/listeners/inbound', { token: admin });
    expect(one.status).toBe(200);
    expect(one.body.listener).toMatchObject({ name: 'inbound', tls: 'on', presents: 'acme' });
    const unknown = await stack.call('GET', '/api/v1/admin/listeners/smtps', { token: admin });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'listener not found: "smtps" (the listeners are inbound and submission)' });
  });
});

describe('assigning and unassigning', () => {
  it('PUT assigns (generation moves, audited), DELETE falls back, a second DELETE is no error', async () => {
    const auditBefore = await settledAuditEvents(stack, admin);
    const g0 = await generation();
    const put = await assign('inbound', { certificate: 'mx1' });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toEqual({
      listener: {
        name: 'inbound', tls: 'on', presents: 'assigned', acme_hosts: [], nodes: [], generation: await generation(),
        certificate: { name: 'mx1', kind: 'issued', hosts: ['mx1.example.net'], not_after: expiresMx1 },
      },
    });
    const g1 = await generation();
    expect(g1).toBeGreaterThan(g0);
    expect((await listeners()).body.listeners[0]).toEqual(put.body.listener);

    const del = await unassign('inbound');
    expect(del.status).toBe(200);
    expect(del.body.listener).toMatchObject({ name: 'inbound', certificate: null, presents: 'acme', acme_hosts: ['mx.example.net'] });
    expect(await generation()).toBeGreaterThan(g1);
    // The certificate itself is kept.
    expect((await stack.sql.query(`SELECT 1 FROM certificates WHERE name = 'mx1'`)).rowCount).toBe(1);

    const again = await unassign('inbound');
    expect(again.status).toBe(200);
    expect(again.body.listener.certificate).toBeNull();

    const added = addedEvents(auditBefore, await settledAuditEvents(stack, admin));
    expect(added.map((e) => [e.type, e.method, e.path, e.category])).toEqual([
      ['listener.certificate_assigned', 'PUT', '/api/v1/admin/listeners/inbound/certificate', 'security'],
      ['listener.certificate_unassigned', 'DELETE', '/api/v1/admin/listeners/inbound/certificate', 'security'],
      ['listener.certificate_unassigned', 'DELETE', '/api/v1/admin/listeners/inbound/certificate', 'security'],
    ]);
  });

  it('a listener with TLS off takes an assignment, keeps showing it, presents nothing; deleting the certificate clears it', async () => {
    const temp = await insertCertificate(stack.sql, stack.encryptionKey, { name: 'temp', kind: 'uploaded', hosts: ['submit.example.net'], days: 30 });
    const put = await assign('submission', { certificate: 'temp' });
    expect(put.status).toBe(200);
    expect(put.body.listener).toMatchObject({ name: 'submission', tls: 'off', presents: 'none', certificate: { name: 'temp', kind: 'uploaded' } });
    expect((await listeners()).body.listeners[1]).toMatchObject({ tls: 'off', presents: 'none', certificate: { name: 'temp' } });
    // The certificate routes (another part of this issue) delete through SQL like this; the assignment goes with it.
    await stack.sql.query('DELETE FROM certificates WHERE id = $1', [temp]);
    expect((await listeners()).body.listeners[1]).toMatchObject({ tls: 'off', presents: 'none', certificate: null });
  });

  describe('refusals: clear status and message, nothing changed', () => {
    beforeAll(async () => {
      expect((await assign('inbound', { certificate: 'mx1' })).status).toBe(200);
    });

    it.each([
      ['an authority', 'inbound', { certificate: 'root-ca' }, 409, { error: 'certificate "root-ca" is a certificate authority: assign a certificate it issued, not the authority itself' }],
      ['an expired certificate', 'inbound', { certificate: 'old' }, 409, { error: expect.stringMatching(/^certificate "old" expired on \S+Z: renew or replace it before assigning it$/) }],
      ['an unknown certificate', 'inbound', { certificate: 'nope' }, 404, { error: 'certificate not found: "nope"' }],
      ['an unknown listener', 'smtps', { certificate: 'mx1' }, 404, { error: 'listener not found: "smtps" (the listeners are inbound and submission)' }],
      ['no certificate field', 'inbound', {}, 400, expect.objectContaining({ fields: { certificate: 'required' } })],
      ['an empty name', 'inbound', { certificate: '' }, 400, expect.objectContaining({ fields: { certificate: 'must not be empty' } })],
      ['an unknown field', 'inbound', { certificate: 'mx1', listener: 'submission' }, 400, { error: 'invalid request body: json: Unrecognized key: "listener"', fields: { json: 'Unrecognized key: "listener"' } }],
    ])('%s', async (_what, listener, body, status, error) => {
      const before = await snapshot();
      const r = await assign(listener, body);
      expect(r.status).toBe(status);
      expect(r.body).toEqual(error);
      expect(await snapshot()).toEqual(before);
    });

    it('DELETE on an unknown listener is 404 and changes nothing', async () => {
      const before = await snapshot();
      const r = await unassign('smtps');
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: 'listener not found: "smtps" (the listeners are inbound and submission)' });
      expect(await snapshot()).toEqual(before);
    });

    it('a project key, even holding every permission, is 403 on every listener route', async () => {
      const project = await seedProject(stack, admin);
      const { token: key } = await project.key(['*']);
      const before = await snapshot();
      for (const [method, path, body] of [
        ['GET', '/api/v1/admin/listeners', undefined],
        ['GET', '/api/v1/admin/listeners/inbound', undefined],
        ['PUT', '/api/v1/admin/listeners/inbound/certificate', { certificate: 'mx1' }],
        ['DELETE', '/api/v1/admin/listeners/inbound/certificate', undefined],
      ] as const) {
        const r = await stack.call(method, path, { token: key, body });
        expect([method, path, r.status, r.body]).toEqual([method, path, 403, { error: 'admin privileges required' }]);
      }
      expect(await snapshot()).toEqual(before);
    });
  });
});
