// Properties of the input guard (issue 33), over generated input: what it
// refuses is exactly what PostgreSQL cannot store (NUL, an unpaired surrogate)
// or what is not UTF-8, it names where the problem is, and it lets everything
// else through unchanged. `pnpm fuzz` runs many more cases (FC_NUM_RUNS).
import fc from 'fast-check';
import { Hono } from 'hono';
import { describe, expect, test } from 'vitest';
import { handleError } from './errors.js';
import { fieldMatcher, firstBadString, guardInput, NUL_PROBLEM, stringProblem, SURROGATE_PROBLEM } from './input-guard.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 300);

/** Strings of any code points, with NULs and lone surrogate halves mixed in now and then. */
const hostileString = fc.array(fc.oneof(
  { weight: 8, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }) },
  { weight: 1, arbitrary: fc.constant('\u0000') },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)) },
), { maxLength: 6 }).map((parts) => parts.join(''));

/** The oracle: what PostgreSQL's UTF-8 text could hold (a string survives UTF-8 encoding unchanged and has no NUL). */
const storable = (s: string) => !s.includes('\u0000') && Buffer.from(s, 'utf8').toString('utf8') === s;

/** JSON values whose strings and keys are hostile strings. */
const { value: hostileJson } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, hostileString, fc.integer(), fc.boolean(), fc.constant(null),
    // Paths are dotted: keys are kept non-empty and free of dots so a path can be followed back.
    fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(hostileString.map((k) => k.replaceAll('.', '_') || '_'), tie('value'), { maxKeys: 4 })),
}));

const everyStringStorable = (v: unknown): boolean =>
  typeof v === 'string' ? storable(v)
    : Array.isArray(v) ? v.every(everyStringStorable)
      : v && typeof v === 'object' ? Object.entries(v).every(([k, x]) => storable(k) && everyStringStorable(x))
        : true;

/** What a dotted path names in `value` (a `"key"` segment names the key itself). */
function at(value: unknown, path: string): unknown {
  if (path === '') return value;
  let here = value as Record<string, unknown>;
  for (const segment of path.split('.')) {
    if (segment.startsWith('"')) return JSON.parse(segment);
    here = here[segment] as Record<string, unknown>;
  }
  return here;
}

describe('stringProblem', () => {
  test('refuses a string exactly when PostgreSQL could not store it, NUL first', () => {
    fc.assert(fc.property(hostileString, (s) => {
      const problem = stringProblem(s);
      if (storable(s)) expect(problem).toBeUndefined();
      else expect(problem).toBe(s.includes('\u0000') ? NUL_PROBLEM : SURROGATE_PROBLEM);
    }), { numRuns });
  });
});

describe('firstBadString', () => {
  test('finds a bad string or key exactly when there is one, and its path leads to it', () => {
    fc.assert(fc.property(hostileJson, (value) => {
      const bad = firstBadString(value);
      if (everyStringStorable(value)) {
        expect(bad).toBeUndefined();
        return;
      }
      expect(bad).toBeDefined();
      const named = at(value, bad!.path);
      expect(typeof named).toBe('string');
      expect(storable(named as string)).toBe(false);
    }), { numRuns, examples: [[{ a: ['ok', 'x\u0000'] }], [{ 'k\ud800': 1 }]] });
  });

  test('an exempt path is never named, any other still is', () => {
    fc.assert(fc.property(fc.array(hostileString, { minLength: 1, maxLength: 5 }), hostileString, (replies, name) => {
      const body = { name, results: replies.map((reply) => ({ reply })) };
      const bad = firstBadString(body, [], fieldMatcher(['results.*.reply']));
      expect(bad?.path).toBe(storable(name) ? undefined : 'name');
    }), { numRuns });
  });
});

describe('guardInput on a route', () => {
  const app = new Hono();
  app.onError(handleError);
  app.post('/', guardInput({ json: true, required: true }), async (c) => c.text(await c.req.text()));
  const post = (body: Uint8Array) => app.request('/', { method: 'POST', body, headers: { 'content-type': 'application/json' } });

  test('any bytes: not UTF-8 is 400 naming it; UTF-8 reaches the handler byte for byte, or is refused naming a field', async () => {
    await fc.assert(fc.asyncProperty(fc.oneof(
      fc.uint8Array({ minLength: 1, maxLength: 64 }),
      hostileJson.map((v) => new Uint8Array(Buffer.from(JSON.stringify({ v }) ?? 'null', 'utf8'))),
    ), async (bytes) => {
      const res = await post(bytes);
      const utf8 = Buffer.from(Buffer.from(bytes).toString('utf8'), 'utf8').equals(Buffer.from(bytes));
      if (!utf8) {
        expect(res.status).toBe(400);
        expect(await res.json()).toEqual({ error: 'body is not valid UTF-8' });
        return;
      }
      const text = Buffer.from(bytes).toString('utf8');
      let parsed: unknown;
      try { parsed = JSON.parse(text); } catch { expect(res.status).toBe(200); return; }
      if (everyStringStorable(parsed)) {
        expect(res.status).toBe(200);
        expect(await res.text()).toBe(text);
      } else {
        expect(res.status).toBe(400);
        const body = await res.json() as { error: string; fields: Record<string, string> };
        expect(body.error).toMatch(/^invalid request body: /);
        expect(Object.values(body.fields)).toHaveLength(1);
      }
    }), { numRuns });
  });
});
