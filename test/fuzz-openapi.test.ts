// An OpenAPI-driven fuzzer over every operation of both descriptions (`api`
// and `app`), against the real stack: well-shaped requests, mutated bodies,
// hostile parameters, broken encodings and every kind of caller. Its oracles:
// no 5xx, every refusal in the documented `{"error": …}` shape, no 2xx where a
// refusal is due (no credential, another tenant's key), no request left
// unanswered, and the stack still answering at the end.
//
// `pnpm test` walks each operation FUZZ_ROUNDS times (10); `pnpm fuzz` many
// more. A failure prints its seed and request index: FUZZ_SEED=<seed> replays it.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useTenantStack } from './support/tenant-stack.js';
import { sessionCookie } from './support/stack.js';
import { startDohResponder, type DohResponder } from './support/doh-responder.js';
import { Generator, operationsOf, random, type OpenAPIObject, type Operation } from './support/openapi-fuzz.js';

const ROOT = new URL('../', import.meta.url).pathname;
const ROUNDS = Number(process.env.FUZZ_ROUNDS ?? 10);
const SEED = Number(process.env.FUZZ_SEED ?? 20261129);
/** Longer than any answer a well-behaved route takes here; a hang fails the oracle instead of the whole file. */
const ANSWER_WITHIN_MS = 15_000;

// Operations whose success ends the fuzzer's own standing (its session, its
// project); their refusals are covered by their own tests.
const SKIPPED = new Set(['DELETE /api/v1/project', 'DELETE /app/api/session', 'POST /app/api/session/sign-out-all']);

type Caller = 'key' | 'session' | 'platform' | 'none' | 'bad-key' | 'foreign';
const CALLERS: Caller[] = ['key', 'session', 'platform', 'none', 'bad-key', 'foreign'];

// The edge's DNS questions (domain checks, webhook targets) go to a resolver of
// the test's own, which knows no names: a lookup answers, and finds nothing.
let doh: DohResponder;
const settings: Record<string, string> = { SERVICE_RATELIMIT_LOGIN_PER_MINUTE: '100000', SERVICE_RATELIMIT_OIDC_PER_MINUTE: '100000' };
let docs: Record<'api' | 'app', OpenAPIObject>;
beforeAll(async () => {
  docs = await exportedDescriptions();
  doh = await startDohResponder();
  settings.SERVICE_DNS_DOH_URL = doh.url;
});
afterAll(async () => { await doh?.close(); });

const env = useTenantStack({ keys: { owner: ['*'] }, settings });

interface Finding { index: number; request: string; status: number; problem: string; body: string }

describe('OpenAPI-driven fuzz', () => {
  test(`every operation of both descriptions, ${ROUNDS} rounds, seed ${SEED}`, { timeout: 60_000 + ROUNDS * 60_000 }, async () => {
    const { stack, admin, tenant, other, keys } = env;
    const operations = operationsOf(docs).filter((o) => !SKIPPED.has(`${o.method} ${o.path}`));
    expect(operations.length).toBeGreaterThan(100);

    // Things a request can name: the tenant's own objects, the other tenant's, and nobody's.
    const asOwner = { token: keys.owner };
    const spareKey = await stack.call('POST', '/api/v1/api-keys', { ...asOwner, body: { name: 'spare', permissions: ['domains:read'] } });
    const domain = await stack.call('POST', '/api/v1/domains', { ...asOwner, body: { name: 'fuzz.test' } });
    const group = await stack.call('POST', '/api/v1/member-groups', { ...asOwner, body: { name: 'fuzzers', permissions: ['emails:read'] } });
    const tenantIds = [spareKey.body?.api_key?.id, domain.body?.domain?.id, group.body?.member_group?.id, tenant.user.id].filter(Boolean) as string[];
    expect(tenantIds.length).toBeGreaterThanOrEqual(3);
    const foreignKey = (await other.key(['*'])).token;
    const cookie = await sessionCookie(stack, tenant.user.id);
    const pools = { ids: [...tenantIds, other.user.id, other.project.id, crypto.randomUUID()], names: ['fuzz.test', 'acme-cert', 'nobody'] };

    const rnd = random(SEED);
    const findings: Finding[] = [];
    let index = 0;
    let slowest = { ms: 0, request: '' };

    /** Sends one request as `caller` and holds its answer against every oracle. */
    async function judge(operation: Operation, caller: Caller, request: FuzzRequest) {
      index++;
      const headers = new Headers(request.headers);
      if (caller === 'key') headers.set('authorization', `Bearer ${keys.owner}`);
      if (caller === 'bad-key') headers.set('authorization', `Bearer myk_${'0'.repeat(8)}_${'x'.repeat(40)}`);
      if (caller === 'foreign') headers.set('authorization', `Bearer ${foreignKey}`);
      if (caller === 'platform') {
        headers.set('authorization', `Bearer ${admin}`);
        if (!operation.path.startsWith('/api/v1/admin/')) headers.set('x-service-project-id', tenant.project.id);
      }
      if (caller === 'session') { headers.set('cookie', cookie); headers.set('origin', new URL(stack.url).origin); }
      const label = `#${index} ${caller} ${operation.method} ${request.url}`;

      const started = performance.now();
      const answer = await send(`${stack.url}${request.url}`, { method: operation.method, headers, body: request.body });
      const ms = performance.now() - started;
      if (ms > slowest.ms) slowest = { ms, request: label };
      const report = (problem: string) => findings.push({ index, request: `${label} ${describeBody(request.body)}`, status: answer.status, problem, body: answer.text.slice(0, 300) });

      if (answer.status === 0) return report(`no answer within ${ANSWER_WITHIN_MS} ms`);
      if (answer.status >= 500) report('5xx');
      if (answer.status >= 400) {
        const problem = errorShapeProblem(answer.contentType, answer.text);
        if (problem) report(problem);
      }
      const refusalDue = (caller === 'none' || caller === 'bad-key') && operation.permission !== 'public';
      if (refusalDue && answer.status < 400) report('answered without a valid credential');
      // Another tenant's key naming this tenant's objects must never act on them, nor see them in an answer.
      const path = request.url.split('?')[0]!;
      if (caller === 'foreign' && answer.status < 300 && tenantIds.some((id) => path.includes(id))) report("another project's key reached this tenant's object");
      if (caller === 'foreign' && tenantIds.some((id) => answer.text.includes(id) && !request.url.includes(id) && !describeBody(request.body).includes(id))) report("another project's key was shown this tenant's object");
    }
    const checkHealth = async () => {
      const health = await stack.call('GET', '/health');
      if (health.status !== 200) findings.push({ index, request: 'GET /health', status: health.status, problem: 'the stack stopped answering', body: String(health.body).slice(0, 300) });
    };

    // 1. A seeded random walk: every operation, every kind of caller, ever more hostile shapes.
    for (let round = 0; round < ROUNDS; round++) {
      for (const operation of operations) {
        const gen = new Generator(docs[operation.surface], rnd, pools);
        // The first rounds give each operation every kind of caller once; later rounds choose.
        const caller: Caller = round < CALLERS.length ? CALLERS[(round + index) % CALLERS.length]! : rnd.pick(CALLERS);
        await judge(operation, caller, buildRequest(operation, gen, rnd, round, caller));
      }
      await checkHealth();
    }

    // 2. Every string a request carries, one at a time, well-shaped but for one taint, from a caller
    //    the route admits: what reaches the handler and the database.
    for (const operation of operations) {
      const gen = new Generator(docs[operation.surface], rnd, pools);
      const caller: Caller = operation.path.startsWith('/api/v1/admin/') ? 'platform' : operation.surface === 'app' ? 'session' : 'key';
      for (const request of taintedRequests(operation, gen)) await judge(operation, caller, request);
    }
    await checkHealth();

    console.log(`fuzz: ${index} requests over ${operations.length} operations, seed ${SEED}; slowest ${slowest.ms.toFixed(0)} ms (${slowest.request})`);
    expect(findings, `replay with FUZZ_SEED=${SEED} FUZZ_ROUNDS=${ROUNDS}`).toEqual([]);
  });
});

/** Both descriptions as the operator binary exports them (`export-api-spec --surface all`). */
async function exportedDescriptions(): Promise<Record<'api' | 'app', OpenAPIObject>> {
  const dir = mkdtempSync(join(tmpdir(), 'fuzz-openapi-'));
  try {
    await promisify(execFile)(process.execPath, ['--import', 'tsx', 'edge/cli/main.ts', 'export-api-spec', '--out', join(dir, 'spec.json'), '--surface', 'all'], { cwd: ROOT });
    const read = (surface: string) => JSON.parse(readFileSync(join(dir, `spec-${surface}.json`), 'utf8')) as OpenAPIObject;
    return { api: read('api'), app: read('app') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface FuzzRequest { url: string; headers: Record<string, string>; body?: string | Uint8Array }

function buildRequest(operation: Operation, gen: Generator, rnd: ReturnType<typeof random>, round: number, caller: Caller): FuzzRequest {
  // Well-shaped first (so handlers are reached past validation), then ever more hostile.
  const hostile = round > 0 && rnd.chance(0.5);
  const query: string[] = [];
  let url = operation.path;
  for (const p of gen.parameters(operation.op)) {
    const value = gen.parameter(p, hostile && rnd.chance(0.5));
    if (p.in === 'path') url = url.replace(`{${p.name}}`, encode(value));
    else if (p.in === 'query' && (p.required || rnd.chance(0.5))) query.push(`${p.name}=${encode(value)}`);
  }
  // A foreign key gets the tenant's ids in the path, the object-level check under test.
  if (caller === 'foreign') url = url.replace(/%7B[^%]+%7D|\{[^}]+\}/g, () => gen.parameter({ name: 'id', in: 'path' }, false));
  const qs = query.join('&');
  const headers: Record<string, string> = {};
  const schema = operation.op.requestBody?.content?.['application/json']?.schema;
  let body: string | Uint8Array | undefined;
  if (schema && operation.method !== 'GET') {
    headers['content-type'] = 'application/json';
    const roll = hostile ? rnd.int(10) : 9;
    if (roll === 0) body = 'not json {';
    else if (roll === 1) body = new Uint8Array([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]); // {"name":"\xff\xfe"}
    else if (roll === 2) body = '';
    else {
      let value = gen.valid(schema);
      if (hostile) for (let i = 0, n = 1 + rnd.int(3); i < n; i++) value = gen.mutate(value);
      body = JSON.stringify(value);
    }
  }
  return { url: qs ? `${url}?${qs}` : url, headers, body };
}

/** One request per string the operation carries (query, path, body leaf), that string tainted with NUL or a lone surrogate. */
function taintedRequests(operation: Operation, gen: Generator): FuzzRequest[] {
  const params = gen.parameters(operation.op).filter((p) => p.in === 'path' || p.in === 'query');
  const values = new Map(params.map((p) => [p, gen.parameter(p, false)]));
  const schema = operation.op.requestBody?.content?.['application/json']?.schema;
  const body = schema && operation.method !== 'GET' ? gen.valid(schema, '', 0, true) : undefined;
  const make = (override?: { param: (typeof params)[number]; value: string }, bodyValue: unknown = body): FuzzRequest => {
    let url = operation.path;
    const query: string[] = [];
    for (const p of params) {
      const value = override?.param === p ? override.value : values.get(p)!;
      if (p.in === 'path') url = url.replace(`{${p.name}}`, encode(value));
      else query.push(`${p.name}=${encode(value)}`);
    }
    return {
      url: query.length ? `${url}?${query.join('&')}` : url,
      headers: bodyValue === undefined ? {} : { 'content-type': 'application/json' },
      body: bodyValue === undefined ? undefined : JSON.stringify(bodyValue),
    };
  };
  const requests: FuzzRequest[] = [];
  for (const taint of ['\u0000', '\ud800']) {
    for (const param of params) requests.push(make({ param, value: `${values.get(param)}${taint}` }));
    for (const tainted of taintEachString(body, taint)) requests.push(make(undefined, tainted));
  }
  return requests;
}

/** Copies of `value`, each with one of its strings (at any depth) ending in `taint`. */
function taintEachString(value: unknown, taint: string): unknown[] {
  if (typeof value === 'string') return [value + taint];
  if (Array.isArray(value)) return value.flatMap((item, i) => taintEachString(item, taint).map((t) => value.map((x, j) => (i === j ? t : x))));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, item]) => taintEachString(item, taint).map((t) => ({ ...value, [key]: t })));
  }
  return [];
}

/** Percent-encoding that sends a lone surrogate as the bytes a careless client sends (its CESU-8 form) instead of throwing. */
function encode(value: string): string {
  let out = '';
  // Iterating a string yields code points: a pair is one, a lone surrogate stays alone.
  for (const char of value) {
    const code = char.charCodeAt(0);
    out += char.length === 1 && code >= 0xd800 && code <= 0xdfff
      ? [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('')
      : encodeURIComponent(char);
  }
  return out;
}

async function send(url: string, init: { method: string; headers: Headers; body?: string | Uint8Array }) {
  const abort = AbortSignal.timeout(ANSWER_WITHIN_MS);
  try {
    const res = await fetch(url, { method: init.method, headers: init.headers, body: init.body as BodyInit | undefined, redirect: 'manual', signal: abort });
    const contentType = res.headers.get('content-type') ?? '';
    // The event stream never ends: its opening is the answer.
    if (contentType.startsWith('text/event-stream')) { await res.body?.cancel(); return { status: res.status, contentType, text: '' }; }
    return { status: res.status, contentType, text: await res.text() };
  } catch (e) {
    return { status: 0, contentType: '', text: String(e) };
  }
}

/** The documented refusal: JSON `{"error": "<message>"}`, with `fields` as name → problem when present. */
function errorShapeProblem(contentType: string, text: string): string | null {
  if (!contentType.startsWith('application/json')) return `refusal is ${contentType || 'untyped'}, not JSON`;
  let body: unknown;
  try { body = JSON.parse(text); } catch { return 'refusal is not valid JSON'; }
  if (!body || typeof body !== 'object' || typeof (body as { error?: unknown }).error !== 'string' || !(body as { error: string }).error) return 'refusal has no error message';
  const fields = (body as { fields?: unknown }).fields;
  if (fields !== undefined && (typeof fields !== 'object' || fields === null || Object.values(fields).some((v) => typeof v !== 'string'))) return 'fields is not name → problem';
  return null;
}

const describeBody = (body: FuzzRequest['body']) =>
  body === undefined ? '' : typeof body === 'string' ? body.slice(0, 200) : `<${body.length} bytes>`;
