// The OpenAPI-driven fuzzer's generator: from our own descriptions it makes
// requests for every operation, first well-shaped, then mutated, all from one
// seed so a failure is replayed by its seed and index. Pure: no network here.

// The parts of an OpenAPI 3.1 document the fuzzer reads.
export interface ReferenceObject { $ref: string }
export interface SchemaObject {
  type?: string | string[]; format?: string; enum?: unknown[]; const?: unknown;
  oneOf?: Schema[]; anyOf?: Schema[]; allOf?: Schema[];
  properties?: Record<string, Schema>; required?: string[]; items?: Schema;
  minItems?: number; maxItems?: number; minimum?: number; maximum?: number; minLength?: number; maxLength?: number;
}
export type Schema = SchemaObject | ReferenceObject;
export interface ParameterObject { name: string; in: 'path' | 'query' | 'header' | 'cookie'; required?: boolean; schema?: Schema }
export interface OperationObject {
  parameters?: (ParameterObject | ReferenceObject)[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
  [extension: `x-${string}`]: unknown;
}
export interface OpenAPIObject {
  paths?: Record<string, Record<string, OperationObject>>;
  components?: { schemas?: Record<string, Schema>; parameters?: Record<string, ParameterObject> };
}

export interface Operation {
  surface: 'api' | 'app';
  method: string;
  /** The path template, `{id}` and all. */
  path: string;
  permission: string;
  op: OperationObject;
}

/** Every operation of the given descriptions, in the order they declare them. */
export function operationsOf(docs: Record<'api' | 'app', OpenAPIObject>): Operation[] {
  return (Object.entries(docs) as ['api' | 'app', OpenAPIObject][]).flatMap(([surface, doc]) =>
    Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({
        surface, method: method.toUpperCase(), path, op, permission: String(op['x-permission'] ?? ''),
      }))));
}

/** mulberry32: small, fast and deterministic; enough for choosing shapes. */
export function random(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return { next, int, pick: <T>(xs: readonly T[]): T => xs[int(xs.length)]!, chance: (p: number) => next() < p };
}
export type Random = ReturnType<typeof random>;

/** Strings that have broken parsers, databases and headers elsewhere. */
export const HOSTILE_STRINGS = [
  '', ' ', '\u0000', 'a\u0000b', '\ud800', 'x\udfffy', '%00', '\r\nX-Injected: 1', '../../etc/passwd', '<script>alert(1)</script>',
  "'; drop table users; --", '{{#a}}{{#a}}{{/a}}{{/a}}', '\u202e', '😀'.repeat(50), 'x'.repeat(70_000), '-1', '0', 'NaN',
  '1e309', 'null', 'true', '[]', '{}', 'ǅ', 'İ', 'ß', '\uFEFF', '\t', 'a@b', '@', 'user@[127.0.0.1]', 'http://127.0.0.1:1/', 'javascript:alert(1)',
  '2026-13-45T25:61:61Z', '9'.repeat(40), '-9223372036854775809', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '00000000-0000-0000-0000-000000000000',
] as const;

/** What a well-shaped string can carry that databases, headers and encoders choke on. */
export const TAINTS = ['\u0000', '\ud800', '\udfff', '\r\n', '\u202e', "'", '%'] as const;

/** Values of every JSON type, for a field that expects another. */
export const HOSTILE_VALUES: readonly unknown[] = [
  null, true, false, 0, -1, 1.5, 2 ** 31, 2 ** 53, -(2 ** 63), 1e308, -1e-308, [], [null], {}, { '': 1 }, { __proto__: { admin: true } },
  { constructor: { prototype: { x: 1 } } }, Array.from({ length: 1000 }, (_, i) => i), ...HOSTILE_STRINGS,
];

export class Generator {
  constructor(private readonly doc: OpenAPIObject, private readonly rnd: Random, private readonly pools: Pools) {}

  private resolve(schema: Schema | undefined): SchemaObject {
    let s: Schema = schema ?? {};
    for (let i = 0; '$ref' in s && i < 10; i++) {
      const name = s.$ref.replace('#/components/schemas/', '');
      s = this.doc.components?.schemas?.[name] ?? {};
    }
    return s as SchemaObject;
  }

  /** A value the schema should accept, built from its type, format, enum and bounds; `every`: with every optional field. */
  valid(schema: Schema | undefined, name = '', depth = 0, every = false): unknown {
    const s = this.resolve(schema);
    const { rnd } = this;
    if (s.enum?.length) return rnd.pick(s.enum);
    if (s.const !== undefined) return s.const;
    for (const key of ['oneOf', 'anyOf'] as const) if (s[key]?.length) return this.valid(rnd.pick(s[key]!), name, depth);
    if (s.allOf?.length) return Object.assign({}, ...s.allOf.map((x) => this.valid(x, name, depth)).filter((v) => v && typeof v === 'object'));
    const type = Array.isArray(s.type) ? rnd.pick(s.type.filter((t) => t !== 'null')) : s.type;
    switch (type ?? (s.properties ? 'object' : 'string')) {
      case 'object': {
        if (depth > 5) return {};
        const out: Record<string, unknown> = {};
        for (const [key, sub] of Object.entries(s.properties ?? {})) {
          if (every || s.required?.includes(key) || rnd.chance(0.5)) out[key] = this.valid(sub, key, depth + 1, every);
        }
        return out;
      }
      case 'array': {
        const min = s.minItems ?? 0;
        const n = Math.min(s.maxItems ?? 3, min + rnd.int(3));
        return Array.from({ length: every ? Math.max(n, 1) : n }, () => this.valid(s.items as Schema, name, depth + 1, every));
      }
      case 'integer': case 'number': {
        const min = typeof s.minimum === 'number' ? s.minimum : 0;
        const max = typeof s.maximum === 'number' ? s.maximum : min + 1000;
        const v = min + rnd.next() * (max - min);
        return type === 'integer' ? Math.floor(v) : v;
      }
      case 'boolean': return rnd.chance(0.5);
      default: return this.validString(s, name);
    }
  }

  private validString(s: SchemaObject, name: string): string {
    const { rnd, pools } = this;
    if (s.format === 'uuid' || /(^|_)id$/.test(name)) return rnd.pick(pools.ids);
    if (s.format === 'email' || /email|^from$|^to$|address/.test(name)) return rnd.pick(['ann@example.org', 'bob@acme.test', 'x@example.com']);
    if (s.format === 'uri' || s.format === 'url' || /url/.test(name)) return rnd.pick(['https://example.com/hook', 'https://93.184.216.34/x']);
    if (s.format === 'date-time') return new Date(Date.UTC(2026, 0, 1 + rnd.int(300))).toISOString();
    if (/domain|host/.test(name)) return rnd.pick(['acme.test', 'example.com', 'mail.example.org']);
    const min = s.minLength ?? 1;
    const max = Math.min(s.maxLength ?? 24, min + 24);
    return 'f'.repeat(min) + 'uzz'.slice(0, Math.max(0, max - min));
  }

  /** A mutated copy of `value`: one leaf or field replaced, dropped or added. */
  mutate(value: unknown): unknown {
    const { rnd } = this;
    // A string that keeps its shape but carries what databases and headers choke on.
    if (typeof value === 'string' && rnd.chance(0.5)) return value + rnd.pick(TAINTS);
    if (value === null || typeof value !== 'object' || rnd.chance(0.1)) return rnd.pick(HOSTILE_VALUES);
    const copy: Record<string, unknown> | unknown[] = Array.isArray(value) ? [...value] : { ...(value as Record<string, unknown>) };
    const keys = Object.keys(copy);
    const roll = rnd.int(4);
    if (roll === 0 || !keys.length) (copy as Record<string, unknown>)[rnd.pick(['extra', 'project_id', '__proto__', 'id', 'role'])] = rnd.pick(HOSTILE_VALUES);
    else if (roll === 1 && !Array.isArray(copy)) delete copy[rnd.pick(keys) as keyof typeof copy];
    else {
      const key = rnd.pick(keys) as keyof typeof copy;
      (copy as Record<string, unknown>)[key as string] = rnd.chance(0.5) ? this.mutate(copy[key]) : rnd.pick(HOSTILE_VALUES);
    }
    return copy;
  }

  parameters(op: OperationObject): ParameterObject[] {
    return (op.parameters ?? []).map((p) => ('$ref' in p ? (this.doc.components?.parameters?.[p.$ref.split('/').pop()!] as ParameterObject) : p));
  }

  /** A value for a path or query parameter: ours, the other tenant's, unknown, or hostile. */
  parameter(p: ParameterObject, hostile: boolean): string {
    const { rnd, pools } = this;
    if (hostile && rnd.chance(0.5)) return rnd.pick(HOSTILE_STRINGS.filter((s) => s.length < 5_000));
    const v = p.in === 'path' ? rnd.pick([...pools.ids, ...pools.names]) : this.valid(p.schema, p.name);
    const text = Array.isArray(v) ? v.join(',') : String(v);
    return hostile ? `${text}${rnd.pick(TAINTS)}` : text;
  }
}

/** Identifiers a request can name: the tenant's own, the other tenant's, and none at all. */
export interface Pools { ids: string[]; names: string[] }
