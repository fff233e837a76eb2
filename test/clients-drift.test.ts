// The committed client code is what the generator makes from today's routes
// (issue 28, DESIGN "Client libraries"): a route, field or description changed
// without `pnpm clients:generate` fails here, naming the file that drifted.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { exportSpec, generatedFilesIn, writeClients } from '../clients/generate.js';
import { buildModel } from '../clients/generator/model.js';
import { VERSION } from '../clients/typescript/src/version.js';

const committed = join(import.meta.dirname, '../clients');
const fresh = mkdtempSync(join(tmpdir(), 'edgemail-clients-'));
let spec: any;
beforeAll(() => { spec = exportSpec(); }, 60_000);
afterAll(() => rmSync(fresh, { recursive: true, force: true }));

test('regenerating the clients from the api surface changes nothing (run `pnpm clients:generate` and commit)', () => {
  const written = writeClients(fresh, spec);
  expect(written.length).toBeGreaterThan(0);
  for (const file of written) {
    expect(readFileSync(join(committed, file), 'utf8'), `${file} differs from what the generator makes`).toBe(readFileSync(join(fresh, file), 'utf8'));
  }
  // No committed generated file the generator no longer makes (in clients/go, the zz_generated_ files beside the hand-written runtime).
  const folders = new Set(written.map((f) => f.slice(0, f.lastIndexOf('/'))));
  // (Python's bytecode cache, which running the Python client's tests writes beside the sources, is ignored by git too.)
  const listed = (root: string, folder: string) => generatedFilesIn(root, folder).filter((name) => name !== '__pycache__');
  for (const folder of folders) expect(listed(committed, folder)).toEqual(listed(fresh, folder));
});

test('every operation of the api surface has one method: admin routes on the admin client, the rest on the project client', () => {
  const model = buildModel(spec);
  const operations = Object.entries(spec.paths as Record<string, Record<string, { operationId: string }>>)
    .filter(([path]) => path.startsWith('/api/v1/'))
    .flatMap(([path, item]) => ['get', 'post', 'put', 'patch', 'delete'].filter((m) => item[m]).map((m) => ({ path, id: item[m]!.operationId })));
  const methods = (kind: 'api' | 'admin') => model.clients[kind].resources.flatMap((r) => r.operations.map((o) => o.operationId));
  expect(methods('admin').sort()).toEqual(operations.filter((o) => o.path.startsWith('/api/v1/admin/')).map((o) => o.id).sort());
  expect(methods('api').sort()).toEqual(operations.filter((o) => !o.path.startsWith('/api/v1/admin/')).map((o) => o.id).sort());
  // The lists the issue names page by their cursors.
  const op = (resource: string, name: string) => model.clients.api.resources.find((r) => r.name === resource)?.operations.find((o) => o.name === name);
  expect(op('inboundEmails', 'list')?.paging).toEqual({ kind: 'cursor', items: 'inbound_emails', cursorFields: ['before', 'before_id'] });
  expect(op('suppressions', 'list')?.paging).toEqual({ kind: 'cursor', items: 'suppressions', cursorFields: ['after'] });
  expect(op('auditLog', 'list')?.paging).toEqual({ kind: 'offset', items: 'events' });
  expect(op('emails', 'send')?.idempotencyKey).toBe(true);
});

test('the version the TypeScript client names in its User-Agent is its package.json\'s', () => {
  expect(VERSION).toBe(JSON.parse(readFileSync(join(committed, 'typescript/package.json'), 'utf8')).version);
});
