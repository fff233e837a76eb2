// The one check every declared route's input passes before it is validated:
// PostgreSQL stores no NUL in text and no unpaired UTF-16 surrogate (a lone
// `\ud800` JSON escape) in UTF-8, and a body that is not UTF-8 would be read
// with U+FFFD in place of its bad bytes and stored so. Refused here, each
// names its field or parameter as a validation failure does (validation.ts),
// instead of reaching the database as a 500 or a silently changed value.
import type { RouteConfig } from '@hono/zod-openapi';
import { createMiddleware } from 'hono/factory';
import { ApiError, badRequest, unsupportedContentType } from './errors.js';
import type { AppEnv } from '../env.js';

/** The content types zod-openapi validates as JSON (its `isJSONContentType`). */
const JSON_TYPE = /^application\/([a-z-.]+\+)?json/i;
const NUL = '\u0000';
/** With the `u` flag a proper pair is one code point: only a lone half is of category Cs. */
const LONE_SURROGATE = /\p{Cs}/u;

export const NUL_PROBLEM = 'must not contain NUL characters';
export const SURROGATE_PROBLEM = 'must be valid Unicode: contains an unpaired surrogate';
export const BODY_REQUIRED = 'request body required: send a JSON object with Content-Type: application/json';
export const UNKNOWN_PARAMETER = 'unknown parameter';
/** What a keyset-paged list (one declaring `before_id`) says of `offset`: ignoring it would hand the first page forever. */
export const NO_OFFSET = 'not supported: page with before and before_id';

/** What is wrong with one string, if anything. */
export function stringProblem(value: string): string | undefined {
  if (value.includes(NUL)) return NUL_PROBLEM;
  if (LONE_SURROGATE.test(value)) return SURROGATE_PROBLEM;
  return undefined;
}

/**
 * The first bad string in a parsed JSON value, by its dotted path
 * (`attachments.0.filename`, as validation failures name nested fields); a
 * bad object key is named by the path to it.
 */
export function firstBadString(value: unknown, path: string[] = [], exempt: (path: string[]) => boolean = () => false): { path: string; problem: string } | undefined {
  if (typeof value === 'string') {
    const problem = exempt(path) ? undefined : stringProblem(value);
    return problem ? { path: path.join('.'), problem } : undefined;
  }
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const bad = firstBadString(item, [...path, String(i)], exempt);
      if (bad) return bad;
    }
    return undefined;
  }
  if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const keyProblem = stringProblem(key);
      // JSON.stringify escapes both NUL and a lone surrogate: the name can be shown.
      if (keyProblem) return { path: [...path, JSON.stringify(key)].join('.'), problem: `field name ${keyProblem}` };
      const bad = firstBadString(item, [...path, key], exempt);
      if (bad) return bad;
    }
  }
  return undefined;
}

/** The refusal for one bad field: `invalid <target>: <field>: <problem>`, and `fields` naming it. */
function refuse(target: 'request body' | 'query' | 'param', field: string, problem: string): ApiError {
  const name = field || 'body';
  return badRequest(`invalid ${target}: ${name}: ${problem}`, { [name]: problem });
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * What the guard needs of a route's declared input: whether its body is JSON
 * and must be sent, the body's declared content types, and the query
 * parameters it takes (`any`: its query schema lets unknown ones through, as
 * the OIDC callback's does for what providers add).
 */
export interface DeclaredInput {
  json: boolean;
  required: boolean;
  types?: string[];
  query?: ReadonlySet<string> | 'any';
}

export function inputOf(config: Pick<RouteConfig, 'method' | 'path' | 'request'>): DeclaredInput {
  const body = config.request?.body;
  const types = Object.keys(body?.content ?? {});
  const json = types.some((type) => JSON_TYPE.test(type));
  return { json, required: json && body?.required === true, types, query: queryNames(config) };
}

/** The parameter names of a declared query schema (a zod object, perhaps piped or refined). */
function queryNames(config: Pick<RouteConfig, 'method' | 'path' | 'request'>): ReadonlySet<string> | 'any' {
  let schema = config.request?.query as unknown as { shape?: Record<string, unknown>; _zod?: { def: { type: string; in?: unknown; catchall?: { _zod?: { def: { type: string } } } } } } | undefined;
  if (!schema) return new Set();
  while (schema?._zod?.def.type === 'pipe') schema = schema._zod.def.in as typeof schema;
  if (!schema?.shape || schema._zod?.def.type !== 'object') {
    // Declared once, at start-up: a route whose query names cannot be read would let every parameter through.
    throw new Error(`${config.method.toUpperCase()} ${config.path}: the query schema must be a zod object`);
  }
  // `.passthrough()`/`.catchall()`: the route takes parameters it does not name; `.strict()` sets `never`.
  const catchall = schema._zod.def.catchall?._zod?.def.type;
  if (catchall && catchall !== 'never') return 'any';
  return new Set(Object.keys(schema.shape));
}

/** Whether a request's content type is one of the route's declared types (parameters such as `charset` aside). */
function declaresType(types: string[], contentType: string): boolean {
  const essence = contentType.split(';')[0]!.trim().toLowerCase();
  return types.some((type) => (JSON_TYPE.test(type) ? JSON_TYPE.test(essence) : type.toLowerCase() === essence));
}

/**
 * Mounted last in a declared route's middleware (defineRoute and its relay
 * and webhook siblings), after the body limit and the permission check: a
 * refused caller learns nothing of the input rules. A body is read here only
 * where the route declares a JSON one (the validator would read it next);
 * streamed bodies (inbound forwarding) are left to their handlers.
 */
export const guardInput = (body: DeclaredInput, exemptFields: string[] = []) => {
  const exempt = fieldMatcher(exemptFields);
  return createMiddleware<AppEnv>(async (c, next) => {
    for (const [name, value] of Object.entries(c.req.param() as Record<string, string>)) {
      const problem = stringProblem(value);
      if (problem) throw refuse('param', name, problem);
    }
    for (const [name, value] of new URL(c.req.url).searchParams) {
      const nameProblem = stringProblem(name);
      if (nameProblem) throw refuse('query', JSON.stringify(name), `parameter name ${nameProblem}`);
      const problem = stringProblem(value);
      if (problem) throw refuse('query', name, problem);
      // As an unknown body field is: a misspelt filter would otherwise answer the unfiltered list.
      if (body.query && body.query !== 'any' && !body.query.has(name)) {
        throw refuse('query', name, name === 'offset' && body.query.has('before_id') ? NO_OFFSET : UNKNOWN_PARAMETER);
      }
    }
    if (!body.json) return next();
    const contentType = c.req.header('content-type');
    const types = body.types ?? ['application/json'];
    if (contentType && !declaresType(types, contentType)) throw unsupportedContentType(contentType, types);
    if (!contentType || !JSON_TYPE.test(contentType)) {
      // No JSON body: the validator would judge `{}` and a PATCH would answer 200 having changed nothing.
      const length = (await c.req.arrayBuffer()).byteLength;
      if (body.required && length === 0) throw badRequest(BODY_REQUIRED);
      // A body without a type is not guessed at (zod-openapi's gate would answer a bare 415).
      if (!contentType && length > 0) throw unsupportedContentType(undefined, types);
      return next();
    }
    let text: string;
    try {
      text = strictUtf8.decode(await c.req.arrayBuffer());
    } catch {
      throw badRequest('body is not valid UTF-8');
    }
    // What the validator's `c.req.json()` reads next: the text just checked, not a second lenient decoding.
    // (Hono types its cache by the parsed values; it holds their promises.)
    (c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve(text);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return next(); // the validator answers `malformed JSON body`
    }
    const bad = firstBadString(parsed, [], exempt);
    if (bad) throw refuse('request body', bad.path, bad.problem);
    await next();
  });
};

/** Whether a body path is one of `patterns` (dotted; `*` stands for any one segment, such as an array index). */
export function fieldMatcher(patterns: string[]): (path: string[]) => boolean {
  const split = patterns.map((p) => p.split('.'));
  return (path) => split.some((p) => p.length === path.length && p.every((segment, i) => segment === '*' || segment === path[i]));
}
