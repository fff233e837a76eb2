// The committed client code is what the generator makes from today's routes
// (issue 28, DESIGN "Client libraries"): a route, field or description changed
// without `pnpm clients:generate` fails here, naming the file that drifted.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { exportSpec, writeClients } from '../clients/generate.js';
import { VERSION } from '../clients/typescript/src/version.js';

const committed = join(import.meta.dirname, '../clients');
const fresh = mkdtempSync(join(tmpdir(), 'edgemail-clients-'));
afterAll(() => rmSync(fresh, { recursive: true, force: true }));

test('regenerating the clients from the api surface changes nothing (run `pnpm clients:generate` and commit)', () => {
  const written = writeClients(fresh, exportSpec());
  expect(written.length).toBeGreaterThan(0);
  for (const file of written) {
    expect(readFileSync(join(committed, file), 'utf8'), `${file} differs from what the generator makes`).toBe(readFileSync(join(fresh, file), 'utf8'));
  }
  // No committed generated file the generator no longer makes.
  const folders = new Set(written.map((f) => f.slice(0, f.lastIndexOf('/'))));
  for (const folder of folders) expect(readdirSync(join(committed, folder)).sort()).toEqual(readdirSync(join(fresh, folder)).sort());
}, 60_000);

test('the version the TypeScript client names in its User-Agent is its package.json\'s', () => {
  expect(VERSION).toBe(JSON.parse(readFileSync(join(committed, 'typescript/package.json'), 'utf8')).version);
});
