// Generates the client libraries from the OpenAPI document of the `api` surface
// (admin routes included, which become the separate admin client):
//
//   node --import tsx clients/generate.ts [--spec <openapi.json>] [--out <dir>]
//
// Without --spec it exports the document with `edgemail export-api-spec` (a
// child process: the exporter loads the Worker's app, which stays out of this
// process). Files are written under --out (default: this folder), each
// client's generated part replaced whole so a removed route leaves no file.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildModel } from './generator/model.js';
import { emitPython } from './generator/python.js';
import { emitGo, GO_GENERATED_PREFIX } from './generator/go.js';
import { emitTypeScript } from './generator/typescript.js';

const here = dirname(fileURLToPath(import.meta.url));

/** Each client's generated folder (relative to the output root) and its files. */
export function generate(spec: unknown): Record<string, Record<string, string>> {
  const model = buildModel(spec as Parameters<typeof buildModel>[0]);
  return {
    'typescript/src/generated': emitTypeScript(model),
    'python/edgemail/_generated': emitPython(model),
    go: emitGo(model),
  };
}

/**
 * Folders whose generated files sit beside hand-written ones (Go wants one
 * package per folder): only the files named with the prefix are the
 * generator's. Every other folder is the generator's whole.
 */
export const SHARED_FOLDERS: Record<string, string> = { go: GO_GENERATED_PREFIX };

/** The generator's files in one folder of an output root. */
export function generatedFilesIn(outRoot: string, folder: string): string[] {
  const prefix = SHARED_FOLDERS[folder] ?? '';
  return readdirSync(join(outRoot, folder)).filter((name) => name.startsWith(prefix)).sort();
}

/** The api surface's OpenAPI document, as `edgemail export-api-spec` writes it. */
export function exportSpec(): unknown {
  const dir = mkdtempSync(join(tmpdir(), 'edgemail-spec-'));
  try {
    const file = join(dir, 'api.json');
    execFileSync(process.execPath, ['--import', 'tsx', join(here, '../edge/cli/main.ts'), 'export-api-spec', '--surface', 'api', '--out', file], {
      cwd: join(here, '..'), stdio: ['ignore', 'ignore', 'inherit'],
    });
    return JSON.parse(readFileSync(file, 'utf8'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function writeClients(outRoot: string, spec: unknown): string[] {
  const written: string[] = [];
  for (const [folder, files] of Object.entries(generate(spec))) {
    const dir = join(outRoot, folder);
    const prefix = SHARED_FOLDERS[folder];
    if (prefix === undefined) rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    if (prefix !== undefined) for (const name of generatedFilesIn(outRoot, folder)) rmSync(join(dir, name));
    for (const [name, text] of Object.entries(files)) {
      writeFileSync(join(dir, name), text);
      written.push(join(folder, name));
    }
  }
  return written;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { spec: { type: 'string' }, out: { type: 'string' } } });
  const spec = values.spec ? JSON.parse(readFileSync(values.spec, 'utf8')) : exportSpec();
  const written = writeClients(resolve(values.out ?? here), spec);
  console.log(`wrote ${written.length} files under ${resolve(values.out ?? here)}`);
}
