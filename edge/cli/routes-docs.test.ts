import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { renderRoutesDocs } from './routes-docs.js';

test('docs/routes.md is generated from the current route declarations', () => {
  const committed = readFileSync(new URL('../../docs/routes.md', import.meta.url), 'utf8');
  expect(committed, 'run `pnpm edgemail routes-docs --out docs/routes.md`').toBe(renderRoutesDocs());
});
