// The console's committed API types are what openapi-typescript makes from
// today's routes (docs/console-ui.md "Typed calls"): a route, field or
// description changed without `pnpm console:generate` fails here, naming the
// file that drifted.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { generateAll } from '../console/scripts/generate-api-types.js';

const committed = join(import.meta.dirname, '../console/src/api/generated');

test('regenerating the console\'s API types changes nothing (run `pnpm console:generate` and commit)', async () => {
  const fresh = await generateAll();
  expect(readdirSync(committed).sort()).toEqual(Object.keys(fresh).sort());
  for (const [name, text] of Object.entries(fresh)) {
    expect(readFileSync(join(committed, name), 'utf8'), `console/src/api/generated/${name} differs from what the generator makes`).toBe(text);
  }
}, 90_000);
