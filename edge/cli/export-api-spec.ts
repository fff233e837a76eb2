// `edgemail export-api-spec --out <file> [--surface api|app|all|relay|webhooks|tracking|unsubscribe]` (`all` is the spec's two: api and app)
import { writeFileSync } from 'node:fs';
import { format, parse } from 'node:path';
import { buildApp } from '../src/app.js';
import { openApiDocument, type Surface } from '../src/openapi.js';

export function exportApiSpec(out: string, surface: Surface | 'all'): string[] {
  const app = buildApp();
  const write = (file: string, s: Surface) => {
    writeFileSync(file, `${JSON.stringify(openApiDocument(app, s), null, 2)}\n`);
    return file;
  };
  if (surface !== 'all') return [write(out, surface)];
  // `all` writes one file per surface, suffixed: spec.json → spec-api.json, spec-app.json.
  const { dir, name, ext } = parse(out);
  const suffixed = (s: Surface) => format({ dir, name: `${name}-${s}`, ext: ext || '.json' });
  return [write(suffixed('api'), 'api'), write(suffixed('app'), 'app')];
}
