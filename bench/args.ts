// Flag parsing shared by the benchmarks.
import { parseArgs } from 'node:util';

/** A bad command line: reported with exit code 2. */
export class UsageError extends Error {}

/** Parses `--name <value>` flags holding positive numbers; unknown flags are usage errors. */
export function numberFlags<K extends string>(argv: string[], defaults: Record<K, number>): Record<K, number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: Object.fromEntries(Object.keys(defaults).map((k) => [k, { type: 'string' as const }])),
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const out = { ...defaults };
  for (const key of Object.keys(defaults) as K[]) {
    const raw = values[key];
    if (raw === undefined) continue;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--${key} must be a positive number, got "${String(raw)}"`);
    out[key] = n;
  }
  return out;
}
