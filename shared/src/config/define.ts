// Declaring a setting once: its kind, default and description. The env name,
// the parser and the generated docs all come from this declaration.
import { z } from 'zod';

export type SettingKind = 'boolean' | 'integer' | 'string' | 'list' | 'duration';

export interface Setting<T> {
  kind: SettingKind;
  default: T;
  description: string;
  /** Validates the value after it has been read from its text form. */
  schema: z.ZodType<T>;
  /** Secrets are never printed by the config docs or the boot log. */
  secret?: boolean;
}

const nonNegativeInt = z.number().int().min(0);

export const integer = (def: number, description: string, schema: z.ZodType<number> = nonNegativeInt): Setting<number> => ({
  kind: 'integer', default: def, description, schema,
});
export const boolean = (def: boolean, description: string): Setting<boolean> => ({
  kind: 'boolean', default: def, description, schema: z.boolean(),
});
export const string = (def: string, description: string, opts: { schema?: z.ZodType<string>; secret?: boolean } = {}): Setting<string> => ({
  kind: 'string', default: def, description, schema: opts.schema ?? z.string(), secret: opts.secret,
});
export const list = (def: string[], description: string, item: z.ZodType<string> = z.string().min(1)): Setting<string[]> => ({
  kind: 'list', default: def, description, schema: z.array(item),
});
/** A duration such as `10s`, `500ms` or `2m`, held in milliseconds. */
export const duration = (defMs: number, description: string): Setting<number> => ({
  kind: 'duration', default: defMs, description, schema: z.number().int().min(0),
});

/** `ratelimit.api_per_minute` → `SERVICE_RATELIMIT_API_PER_MINUTE`. */
export function envName(setting: string): string {
  return `SERVICE_${setting.replace(/\./g, '_').toUpperCase()}`;
}

const DURATION = /^(\d+)(ms|s|m|h)$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** Reads one setting from its text (env) form; throws a message naming the problem. */
export function parseText(kind: SettingKind, text: string): unknown {
  const t = text.trim();
  switch (kind) {
    case 'boolean':
      if (/^(true|1|yes|on)$/i.test(t)) return true;
      if (/^(false|0|no|off)$/i.test(t)) return false;
      throw new Error(`expected true or false, got "${text}"`);
    case 'integer':
      if (!/^-?\d+$/.test(t)) throw new Error(`expected an integer, got "${text}"`);
      return Number(t);
    case 'duration': {
      const m = DURATION.exec(t);
      if (!m) throw new Error(`expected a duration such as 10s, 500ms or 2m, got "${text}"`);
      return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
    }
    case 'list':
      return t === '' ? [] : t.split(',').map((s) => s.trim()).filter(Boolean);
    case 'string':
      return text;
  }
}
