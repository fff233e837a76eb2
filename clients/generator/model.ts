// The language-neutral description of the API that every emitter reads: one
// pass over an OpenAPI document decides the client's shape (which client an
// operation belongs to, its namespace and method name, its arguments, how its
// list pages and what it answers), so the TypeScript, Python and Go clients
// cannot disagree on any of it.

/** A JSON Schema as our OpenAPI 3.1 documents write it (only the parts the emitters read). */
export interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  additionalProperties?: boolean | Schema;
  format?: string;
  description?: string;
  nullable?: boolean;
}

export interface Param {
  /** The name on the wire (`before_id`, `templateId`). */
  name: string;
  required: boolean;
  schema: Schema;
  description?: string;
}

/** How a list operation's pages follow one another. */
export type Paging =
  /** `next: {before, before_id}` (or `{after}`) names the next page; `null` ends the list. Each field is sent back as the query parameter of the same name. */
  | { kind: 'cursor'; items: string; cursorFields: string[] }
  /** `limit`/`offset` (the audit log): the next page starts past the rows seen; a short page ends the list. */
  | { kind: 'offset'; items: string };

/** What a successful answer carries. */
export type Answer =
  | { kind: 'json'; status: number; schema: Schema }
  | { kind: 'empty'; status: number }
  /** A byte stream (`message/rfc822`, an attachment, a PEM) handed over unbuffered. */
  | { kind: 'binary'; status: number; contentType: string }
  /** One JSON value per line. */
  | { kind: 'ndjson'; status: number; schema: Schema };

export interface Operation {
  operationId: string;
  /** The method's name inside its namespace (`send`, `list`, `rotateSecret`). */
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  tag: string;
  summary: string;
  description: string;
  pathParams: Param[];
  queryParams: Param[];
  body: { schema: Schema; required: boolean } | null;
  answer: Answer;
  paging: Paging | null;
  /** The operation accepts an `Idempotency-Key` header: the client adds one when the caller gives none, which makes its retry safe. */
  idempotencyKey: boolean;
  /** Error statuses the document lists for it. */
  errorStatuses: number[];
}

export interface Resource {
  /** The namespace's name in camelCase (`inboundEmails`); emitters convert it to their own case. */
  name: string;
  /** The OpenAPI tag its operations carry (first one seen), for grouping in docs. */
  tag: string;
  operations: Operation[];
}

export interface ClientModel {
  /** `api` (project keys, `myk_`) or `admin` (platform credentials, `mya_`, routes under /api/v1/admin). */
  kind: 'api' | 'admin';
  resources: Resource[];
}

export interface ApiModel {
  title: string;
  version: string;
  schemas: Record<string, Schema>;
  clients: { api: ClientModel; admin: ClientModel };
}

interface OpenApiOperation {
  operationId?: string;
  tags?: string[];
  summary?: string;
  description?: string;
  parameters?: { name: string; in: string; required?: boolean; schema?: Schema; description?: string }[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

interface OpenApiDocument {
  info: { title: string; version: string };
  paths: Record<string, Partial<Record<string, OpenApiOperation>>>;
  components?: { schemas?: Record<string, Schema> };
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const PREFIX = '/api/v1/';

export const camel = (words: string[]) =>
  words.map((w, i) => (i === 0 ? w.charAt(0).toLowerCase() + w.slice(1) : w.charAt(0).toUpperCase() + w.slice(1))).join('');
const wordsOf = (segment: string) => segment.split(/[-_]/).filter(Boolean);
const isParam = (segment: string) => segment.startsWith('{');
const singular = (word: string) => (word.endsWith('s') ? word.slice(0, -1) : word);

export function resolve(schema: Schema, schemas: Record<string, Schema>): Schema {
  return schema.$ref ? resolve(schemas[refName(schema.$ref)] ?? {}, schemas) : schema;
}
export const refName = (ref: string) => ref.slice(ref.lastIndexOf('/') + 1);

/** Builds the model; throws on anything it cannot name unambiguously, so a new route never slips into a client misnamed. */
export function buildModel(doc: OpenApiDocument): ApiModel {
  const schemas = doc.components?.schemas ?? {};
  const entries: { path: string; method: (typeof METHODS)[number]; op: OpenApiOperation }[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    if (!path.startsWith(PREFIX)) continue;
    for (const method of METHODS) {
      const op = item?.[method];
      if (op) entries.push({ path, method, op });
    }
  }
  const paths = new Set(entries.map((e) => e.path));
  const getPaths = new Set(entries.filter((e) => e.method === 'get').map((e) => e.path));

  const clients: ApiModel['clients'] = { api: { kind: 'api', resources: [] }, admin: { kind: 'admin', resources: [] } };
  for (const { path, method, op } of entries) {
    const all = path.slice(PREFIX.length).split('/');
    const kind = all[0] === 'admin' ? 'admin' : 'api';
    const segments = kind === 'admin' ? all.slice(1) : all;
    const base = kind === 'admin' ? `${PREFIX}admin/` : PREFIX;
    // The namespace is the shortest leading run of literal segments that is itself a route
    // (`emails` for /emails/send); a prefix with no route of its own joins the next segment (`relay/nodes`).
    let take = 1;
    while (take < segments.length && !isParam(segments[take]!) && !paths.has(base + segments.slice(0, take).join('/'))) take++;
    const resourceName = camel(segments.slice(0, take).flatMap(wordsOf));
    const rest = segments.slice(take);
    const operation = buildOperation(path, method, op, rest, schemas, getPaths);
    const client = clients[kind];
    let resource = client.resources.find((r) => r.name === resourceName);
    if (!resource) client.resources.push((resource = { name: resourceName, tag: op.tags?.[0] ?? '', operations: [] }));
    const clash = resource.operations.find((o) => o.name === operation.name);
    if (clash) throw new Error(`${operation.operationId} and ${clash.operationId} would both be ${resourceName}.${operation.name}`);
    resource.operations.push(operation);
  }
  for (const client of Object.values(clients)) client.resources.sort((a, b) => a.name.localeCompare(b.name));
  return { title: doc.info.title, version: doc.info.version, schemas, clients };
}

function buildOperation(
  path: string, verb: (typeof METHODS)[number], op: OpenApiOperation, rest: string[],
  schemas: Record<string, Schema>, getPaths: Set<string>,
): Operation {
  if (!op.operationId) throw new Error(`${verb.toUpperCase()} ${path} has no operationId`);
  const params = op.parameters ?? [];
  const param = (p: (typeof params)[number]): Param => ({ name: p.name, required: p.required ?? false, schema: p.schema ?? {}, description: p.description });
  const pathParams = params.filter((p) => p.in === 'path').map(param);
  const queryParams = params.filter((p) => p.in === 'query').map(param);
  const idempotencyKey = params.some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key');
  const bodySchema = op.requestBody?.content?.['application/json']?.schema;
  const body = bodySchema ? { schema: bodySchema, required: op.requestBody?.required ?? true } : null;

  const statuses = Object.keys(op.responses ?? {}).map(Number).sort((a, b) => a - b);
  const okStatus = statuses.find((s) => s >= 200 && s < 300);
  if (okStatus === undefined) throw new Error(`${op.operationId} has no 2xx answer`);
  const answer = answerOf(okStatus, op.responses![String(okStatus)]?.content);
  const json = answer.kind === 'json' && verb === 'get' ? answer.schema : null;
  const items = json ? listItemsOf(json, schemas) : null;
  const paging = json && items ? pagingOf(items, json, queryParams, schemas) : null;
  // A list is one that pages, or whose array is named as the path ends (`api_keys` for /api-keys);
  // an object that merely holds an array (/project/sso) is a `get`.
  const last = path.split('/').filter((s) => !isParam(s)).pop() ?? '';
  const isList = paging !== null || (items !== null && (items === last.replace(/-/g, '_') || items.endsWith(`_${last}`)));

  const method = verb.toUpperCase() as Operation['method'];
  return {
    operationId: op.operationId, name: methodName(method, path, rest, isList, getPaths),
    method, path, tag: op.tags?.[0] ?? '', summary: op.summary ?? '', description: op.description ?? '',
    pathParams, queryParams, body, answer, paging, idempotencyKey,
    errorStatuses: statuses.filter((s) => s >= 400),
  };
}

function answerOf(status: number, content: Record<string, { schema?: Schema }> | undefined): Answer {
  const [type, media] = Object.entries(content ?? {})[0] ?? [];
  if (!type) return { kind: 'empty', status };
  if (type === 'application/json') return { kind: 'json', status, schema: media?.schema ?? {} };
  if (type === 'application/x-ndjson') return { kind: 'ndjson', status, schema: media?.schema ?? {} };
  return { kind: 'binary', status, contentType: type };
}

/** A list is an object answer holding exactly one array: the property's name. */
function listItemsOf(answer: Schema, schemas: Record<string, Schema>): string | null {
  const arrays = Object.entries(resolve(answer, schemas).properties ?? {}).filter(([, s]) => resolve(s, schemas).type === 'array');
  return arrays.length === 1 ? arrays[0]![0] : null;
}

/** A list pages by a `next` cursor or by `offset`; one without either answers everything at once. */
function pagingOf(items: string, answer: Schema, query: Param[], schemas: Record<string, Schema>): Paging | null {
  const next = resolve(answer, schemas).properties?.next;
  if (next) {
    const cursorFields = Object.keys(resolve(next, schemas).properties ?? {});
    const missing = cursorFields.filter((f) => !query.some((q) => q.name === f));
    if (missing.length) throw new Error(`cursor field(s) ${missing.join(', ')} have no query parameter of the same name`);
    return { kind: 'cursor', items, cursorFields };
  }
  if (query.some((q) => q.name === 'offset')) return { kind: 'offset', items };
  return null;
}

/**
 * The method's name from the path past the namespace: the verb alone on the
 * namespace itself (`list`, `create`, `get`, `update`, `delete`), the action on
 * a POST that is not a collection (`send`, `rotateSecret`, `redeliver`), and
 * verb + sub-resource otherwise (`listDeliveries`, `getRaw`, `createVersion`).
 */
function methodName(method: Operation['method'], path: string, rest: string[], isList: boolean, getPaths: Set<string>): string {
  const literals = rest.filter((s) => !isParam(s));
  const endsOnParam = rest.length > 0 && isParam(rest[rest.length - 1]!);
  // Only the last literal names the sub-resource: templates/{t}/versions/{v}/localizations → localizations.
  const words = literals.length ? wordsOf(literals[literals.length - 1]!) : [];
  if (endsOnParam && words.length) words.push(singular(words.pop()!));
  const verbs = { GET: isList ? 'list' : 'get', POST: 'create', PUT: 'set', PATCH: 'update', DELETE: 'delete' } as const;
  if (method === 'POST' && literals.length && !getPaths.has(path)) {
    return camel(wordsOf(literals[literals.length - 1]!));
  }
  if (method === 'POST' && literals.length && !endsOnParam) words.push(singular(words.pop()!)); // a POST to a sub-collection creates one
  return camel([verbs[method], ...words]);
}
