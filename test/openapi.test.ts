// The OpenAPI document: served by the Worker, valid OpenAPI 3.1, identical to
// what the binary exports, and a faithful picture of the permission check —
// every operation it lists is refused without a credential, without the
// permission it names, and (admin) to any project key.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { allPermissions, sessionOnlyPermissions } from '@edgemail/shared';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';

const ROOT = new URL('../', import.meta.url).pathname;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

interface Operation { method: string; path: string; op: any }

/** Every operation of a document, flattened. */
function operations(doc: any): Operation[] {
  return Object.entries(doc.paths ?? {}).flatMap(([path, item]: [string, any]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ method, path, op: item[method] })));
}

/** A concrete request path: every `{param}` replaced by a random UUID. */
const concrete = (path: string) => path.replace(/\{[^}]+\}/g, () => crypto.randomUUID());
const hasBody = (method: string) => ['post', 'put', 'patch'].includes(method);
const label = ({ method, path }: Operation) => `${method.toUpperCase()} ${path}`;

/** Runs `pnpm -s edgemail <args>`; resolves with exit code and output whatever the code. */
function edgemail(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SERVICE_')));
  return new Promise((resolve) => {
    execFile('pnpm', ['-s', 'edgemail', ...args], { cwd: ROOT, env, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Every operation has an operationId, unique within the document. */
function expectOperationIds(doc: any) {
  const ids = operations(doc).map((o) => o.op.operationId);
  for (const [i, o] of operations(doc).entries()) expect(ids[i], label(o)).toMatch(/^[a-z][A-Za-z0-9]+$/);
  expect(new Set(ids).size).toBe(ids.length);
}

/**
 * The documents clients are generated from (api, app) carry the names
 * (docs/api.md, "Operation names"): each operationId is `<resource>_<method>`,
 * unique; each operation has exactly one tag, its resource's, which the
 * document lists with a description; one tag is one resource and back.
 */
function expectNamedOperations(doc: any) {
  const ids = operations(doc).map((o) => o.op.operationId);
  expect(new Set(ids).size).toBe(ids.length);
  const listed = new Map<string, string>((doc.tags ?? []).map((t: any) => [t.name, t.description]));
  expect(listed.size, 'top-level tags, each once').toBe(doc.tags.length);
  const tagOf = new Map<string, string>();
  const resourceOf = new Map<string, string>();
  for (const o of operations(doc)) {
    expect(o.op.operationId, label(o)).toMatch(/^[a-z][A-Za-z0-9]*_[a-z][A-Za-z0-9]*$/);
    expect(o.op.tags, label(o)).toHaveLength(1);
    const [tag] = o.op.tags;
    expect(listed.get(tag), `${label(o)}: tag ${tag} listed with a description`).toMatch(/\S/);
    const resource = o.op.operationId.split('_')[0];
    expect(tagOf.get(resource) ?? tag, `${label(o)}: resource ${resource} under one tag`).toBe(tag);
    expect(resourceOf.get(tag) ?? resource, `${label(o)}: tag ${tag} on one resource`).toBe(resource);
    tagOf.set(resource, tag);
    resourceOf.set(tag, resource);
  }
  expect([...listed.keys()].sort(), 'every listed tag is used').toEqual([...resourceOf.keys()].sort());
}

async function validate(doc: unknown) {
  const validator = new Validator();
  const result = await validator.validate(doc as Record<string, unknown>);
  expect(result.valid, `OpenAPI validation errors:\n${JSON.stringify(result.errors, null, 2)}`).toBe(true);
  expect(validator.version).toBe('3.1');
}

let stack: TestStack;
let served: any;
let tmp: string;

beforeAll(async () => {
  // Rate limiting is not under test here; the generated sweep sends many requests.
  stack = await startTestStack({ settings: { SERVICE_RATELIMIT_ENABLED: 'false' } });
  const reply = await stack.call('GET', '/api/v1/openapi.json');
  expect(reply.status).toBe(200);
  served = reply.body;
  tmp = mkdtempSync(join(tmpdir(), 'edgemail-openapi-'));
});
afterAll(async () => {
  await stack?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('GET /api/v1/openapi.json', () => {
  it('is served without a credential, as JSON', async () => {
    const res = await fetch(`${stack.url}/api/v1/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await res.json() as any).openapi).toMatch(/^3\.1\./);
  });

  it('passes the OpenAPI 3.1 schema validator', async () => {
    await validate(served);
  });

  it('covers the /api/v1 surface only, including the admin routes', () => {
    const paths = Object.keys(served.paths);
    expect(paths.length).toBeGreaterThan(0);
    for (const p of paths) expect(p).toMatch(/^\/api\/v1\//);
    expect(paths).toEqual(expect.arrayContaining(['/api/v1/api-keys', '/api/v1/permissions', '/api/v1/admin/users']));
  });
});

describe('each operation documents its permission and errors', () => {
  const known = new Set<string>([...allPermissions, ...sessionOnlyPermissions, 'platform:admin', 'authenticated']);

  it('every operation names a known x-permission', () => {
    for (const o of operations(served)) {
      expect(known.has(o.op['x-permission']), `${label(o)}: x-permission ${JSON.stringify(o.op['x-permission'])}`).toBe(true);
    }
  });

  it('admin operations need platform:admin, and only they do', () => {
    for (const o of operations(served)) {
      const admin = o.path.startsWith('/api/v1/admin/');
      expect(o.op['x-permission'] === 'platform:admin', label(o)).toBe(admin);
    }
  });

  it('every operation documents 401 and 403 with the Error schema', () => {
    expect(served.components.schemas.Error).toMatchObject({
      type: 'object', properties: { error: { type: 'string' } }, required: expect.arrayContaining(['error']),
    });
    for (const o of operations(served)) {
      for (const status of ['401', '403']) {
        expect(o.op.responses[status]?.content?.['application/json']?.schema, `${label(o)} ${status}`)
          .toEqual({ $ref: '#/components/schemas/Error' });
      }
    }
  });

  it('every operation on an {id} path documents 404 with the Error schema', () => {
    const withId = operations(served).filter((o) => o.path.includes('{id}'));
    expect(withId.length).toBeGreaterThan(0);
    for (const o of withId) {
      expect(o.op.responses['404']?.content?.['application/json']?.schema, label(o)).toEqual({ $ref: '#/components/schemas/Error' });
    }
  });
});

describe('edgemail export-api-spec', () => {
  it('writes exactly the served document', async () => {
    const out = join(tmp, 'spec.json');
    const run = await edgemail(['export-api-spec', '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual(served);
  });

  it('--surface app writes a valid document of /app/api paths only', async () => {
    const out = join(tmp, 'app.json');
    const run = await edgemail(['export-api-spec', '--out', out, '--surface', 'app']);
    expect(run.code, run.stderr).toBe(0);
    const doc = JSON.parse(readFileSync(out, 'utf8'));
    await validate(doc);
    for (const p of Object.keys(doc.paths ?? {})) expect(p).toMatch(/^\/app\/api(\/|$)/);
    // A real document: the console's sign-in routes (docs/console.md), each with its operationId.
    expect(operations(doc).map(label)).toEqual(expect.arrayContaining(['POST /app/api/session', 'GET /app/api/session', 'DELETE /app/api/session']));
    expect(operations(doc).find((o) => label(o) === 'POST /app/api/session')?.op).toMatchObject({ operationId: 'session_create', tags: ['Session'] });
    expectNamedOperations(doc);
  });

  it('every operation of every surface has an operationId, unique within its document (api and app: named by resource; app: above)', async () => {
    const exported = await Promise.all(['relay', 'webhooks'].map(async (surface) => {
      const out = join(tmp, `ids-${surface}.json`);
      const run = await edgemail(['export-api-spec', '--out', out, '--surface', surface]);
      expect(run.code, run.stderr).toBe(0);
      return JSON.parse(readFileSync(out, 'utf8'));
    }));
    for (const doc of exported) expectOperationIds(doc);
    expectNamedOperations(served);
    // The names the clients use (clients/README.md): resource and method, and the resource's title as the tag.
    const named = (l: string) => operations(served).find((o) => label(o) === l)?.op;
    expect(named('POST /api/v1/api-keys/{id}/revoke')).toMatchObject({ operationId: 'apiKeys_revoke', tags: ['API keys'] });
    expect(named('POST /api/v1/emails/send')).toMatchObject({ operationId: 'emails_send', tags: ['Emails'] });
    expect(named('GET /api/v1/inbound-emails')).toMatchObject({ operationId: 'inboundEmails_list', tags: ['Inbound emails'] });
    expect(named('GET /api/v1/stylesheets/{id}')).toMatchObject({ operationId: 'stylesheets_get', tags: ['Stylesheets'] });
    expect(named('GET /api/v1/usage')).toMatchObject({ operationId: 'usage_get', tags: ['Usage'] });
    expect(named('GET /api/v1/permissions')).toMatchObject({ operationId: 'permissions_get', tags: ['Permissions'] });
    expect(named('GET /api/v1/relay/nodes')).toMatchObject({ operationId: 'relayNodes_list', tags: ['Relay nodes'] });
    expect(named('PUT /api/v1/admin/users/{id}/password')).toMatchObject({ operationId: 'adminUsers_setPassword', tags: ['Admin: users'] });
    expect(served.tags.find((t: any) => t.name === 'Admin: users')?.description).toMatch(/\S/);
  }, 60_000); // two exports at once

  it('--surface all writes one suffixed file per surface', async () => {
    const dir = mkdtempSync(join(tmp, 'all-'));
    const run = await edgemail(['export-api-spec', '--out', join(dir, 'spec.json'), '--surface', 'all']);
    expect(run.code, run.stderr).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(['spec-api.json', 'spec-app.json']);
    expect(JSON.parse(readFileSync(join(dir, 'spec-api.json'), 'utf8'))).toEqual(served);
    const app = JSON.parse(readFileSync(join(dir, 'spec-app.json'), 'utf8'));
    for (const p of Object.keys(app.paths ?? {})) expect(p).toMatch(/^\/app\/api(\/|$)/);
  });

  it('--surface all keeps the files in the --out directory, even one with a dot in its name', async () => {
    const dir = mkdtempSync(join(tmp, 'clients.v1-'));
    const run = await edgemail(['export-api-spec', '--out', join(dir, 'openapi'), '--surface', 'all']);
    expect(run.code, run.stderr).toBe(0);
    const written = readdirSync(dir).sort();
    expect(written).toHaveLength(2);
    expect(written[0]).toMatch(/^openapi-api(\.json)?$/);
    expect(written[1]).toMatch(/^openapi-app(\.json)?$/);
  });

  it('missing --out exits 2 naming the option', async () => {
    const run = await edgemail(['export-api-spec']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--out');
  });

  it('a bad --surface exits 2 naming the option and writes nothing', async () => {
    const out = join(tmp, 'bad.json');
    const run = await edgemail(['export-api-spec', '--out', out, '--surface', 'x']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--surface');
    expect(existsSync(out)).toBe(false);
  });
});

describe('the declaration drives the check: no route escapes it', () => {
  let admin: string;
  let noPermissions: string;
  let wildcard: string;
  const request = (o: Operation, token?: string) =>
    stack.call(o.method.toUpperCase(), concrete(o.path), { token, body: hasBody(o.method) ? {} : undefined });

  beforeAll(async () => {
    admin = await platformToken(stack);
    const { key } = await seedProject(stack, admin, 'sweep');
    noPermissions = (await key([])).token;
    wildcard = (await key(['*'])).token;
  });

  it('no credential → 401 on every operation', async () => {
    for (const o of operations(served)) {
      const reply = await request(o);
      expect(reply.status, `${label(o)}: ${JSON.stringify(reply.body)}`).toBe(401);
      expect(reply.body).toEqual({ error: expect.any(String) });
    }
  });

  it('an unknown token → 401 on every operation', async () => {
    const unknown = `myk_${'a'.repeat(8)}_${'A'.repeat(43)}`;
    for (const o of operations(served)) {
      const reply = await request(o, unknown);
      expect(reply.status, `${label(o)}: ${JSON.stringify(reply.body)}`).toBe(401);
    }
  });

  it('a key holding no permissions → 403 "no access to <resource>" on every catalogue-permission operation', async () => {
    const guarded = operations(served).filter((o) => (allPermissions as readonly string[]).includes(o.op['x-permission']));
    expect(guarded.length).toBeGreaterThan(0);
    for (const o of guarded) {
      const resource = o.op['x-permission'].split(':')[0];
      const reply = await request(o, noPermissions);
      expect({ op: label(o), status: reply.status, body: reply.body })
        .toEqual({ op: label(o), status: 403, body: { error: `no access to ${resource} in this project` } });
    }
  });

  // A handler that checks something other than its declaration (an extra grant
  // in the handler, a forgotten alternative) passes the no-permission sweep
  // above but not this one (issue 33: the sandbox routes took emails:read).
  it('a key holding every permission but the declared one (and its x-also-granted-by) → 403 on every catalogue-permission operation', async () => {
    const guarded = operations(served).filter((o) => (allPermissions as readonly string[]).includes(o.op['x-permission']));
    const { key } = await seedProject(stack, admin, 'all-but');
    const tokens = new Map<string, string>();
    for (const o of guarded) {
      const excluded = [o.op['x-permission'], ...(o.op['x-also-granted-by'] ?? [])] as string[];
      const held = allPermissions.filter((p) => !excluded.includes(p));
      const id = held.join(',');
      if (!tokens.has(id)) tokens.set(id, (await key(held, { name: `all but ${excluded.join(' ')}` })).token);
      const reply = await request(o, tokens.get(id));
      const [resource] = o.op['x-permission'].split(':');
      expect({ op: label(o), status: reply.status, refusal: [`permission ${excluded.join(' or ')} required`, `no access to ${resource} in this project`].includes(reply.body?.error) })
        .toEqual({ op: label(o), status: 403, refusal: true });
    }
  });

  it('a project key holding * → 403 "admin privileges required" on every admin operation', async () => {
    const adminOps = operations(served).filter((o) => o.path.startsWith('/api/v1/admin/'));
    expect(adminOps.length).toBeGreaterThan(0);
    for (const o of adminOps) {
      const reply = await request(o, wildcard);
      expect({ op: label(o), status: reply.status, body: reply.body })
        .toEqual({ op: label(o), status: 403, body: { error: 'admin privileges required' } });
    }
  });

  it('the same * key is not refused on the project operations it covers', async () => {
    const guarded = operations(served).filter((o) => (allPermissions as readonly string[]).includes(o.op['x-permission']));
    for (const o of guarded) {
      const reply = await request(o, wildcard);
      expect([401, 403], `${label(o)}: ${reply.status} ${JSON.stringify(reply.body)}`).not.toContain(reply.status);
    }
  });
});
