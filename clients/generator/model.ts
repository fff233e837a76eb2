// The language-neutral description of the API that every emitter reads: one
// pass over an OpenAPI document decides the client's shape (which client an
// operation belongs to, its arguments, how its list pages and what it
// answers), so the TypeScript, Python and Go clients cannot disagree on any of
// it. The names are the document's: `operationId` is `<resource>_<method>`
// and the one tag is the resource's title (edge/src/http/operation-names.ts).

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
  /** The method's name inside its namespace (`send`, `list`, `rotateSecret`): the operationId past `_`. */
  name: string;
  /** What the operation's types are named from (`PostEmailsSend` → `PostEmailsSendBody`): method and path, as first published. */
  typeName: string;
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
  /** The namespace's name in camelCase (`inboundEmails`; the admin client's without `admin`); emitters convert it to their own case. */
  name: string;
  /** The resource's title: the one OpenAPI tag its operations carry (`Inbound emails`). */
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
/** `<resource>_<method>`, both camelCase: split at the one underscore. */
const OPERATION_ID = /^([a-z][A-Za-z0-9]*)_([a-z][A-Za-z0-9]*)$/;

export const camel = (words: string[]) =>
  words.map((w, i) => (i === 0 ? w.charAt(0).toLowerCase() + w.slice(1) : w.charAt(0).toUpperCase() + w.slice(1))).join('');

export function resolve(schema: Schema, schemas: Record<string, Schema>): Schema {
  return schema.$ref ? resolve(schemas[refName(schema.$ref)] ?? {}, schemas) : schema;
}
export const refName = (ref: string) => ref.slice(ref.lastIndexOf('/') + 1);

/**
 * Builds the model; throws on anything it cannot name unambiguously, so a new
 * route never slips into a client misnamed: an operationId not of the form
 * `<resource>_<method>`, an operation without exactly one tag, one resource
 * under two tags or one tag over two resources, an admin route whose resource
 * is not `admin…`.
 */
export function buildModel(doc: OpenApiDocument): ApiModel {
  const schemas = doc.components?.schemas ?? {};
  const clients: ApiModel['clients'] = { api: { kind: 'api', resources: [] }, admin: { kind: 'admin', resources: [] } };
  const tagOf = new Map<string, string>();
  const resourceOf = new Map<string, string>();
  for (const [path, item] of Object.entries(doc.paths)) {
    if (!path.startsWith(PREFIX)) continue;
    for (const method of METHODS) {
      const op = item?.[method];
      if (!op) continue;
      const label = `${method.toUpperCase()} ${path}`;
      const [, id, name] = OPERATION_ID.exec(op.operationId ?? '') ?? [];
      if (!id || !name) throw new Error(`${label}: operationId ${JSON.stringify(op.operationId)} is not <resource>_<method>`);
      if (op.tags?.length !== 1) throw new Error(`${label} (${op.operationId}) has ${op.tags?.length ?? 0} tags, not its resource's one`);
      const tag = op.tags[0]!;
      const kind = path.startsWith(`${PREFIX}admin/`) ? 'admin' : 'api';
      // The admin client's resources drop the `admin` that keeps their ids apart from the project's in the one document.
      if (kind === 'admin' && !/^admin[A-Z]/.test(id)) throw new Error(`${label}: ${op.operationId} is an admin route on no admin… resource`);
      const resourceName = kind === 'admin' ? camel([id.slice('admin'.length)]) : id;
      // The tag is the resource: one each way.
      const tagged = tagOf.get(id) ?? tag;
      const holder = resourceOf.get(tag) ?? id;
      if (tagged !== tag) throw new Error(`${label}: resource ${id} is tagged both ${JSON.stringify(tagged)} and ${JSON.stringify(tag)}`);
      if (holder !== id) throw new Error(`${label}: tag ${JSON.stringify(tag)} is on both ${holder} and ${id}`);
      tagOf.set(id, tag);
      resourceOf.set(tag, id);
      const client = clients[kind];
      let resource = client.resources.find((r) => r.name === resourceName);
      if (!resource) client.resources.push((resource = { name: resourceName, tag, operations: [] }));
      const clash = resource.operations.find((o) => o.name === name);
      if (clash) throw new Error(`${op.operationId} and ${clash.operationId} would both be ${resourceName}.${name}`);
      resource.operations.push(buildOperation(path, method, op, name, schemas));
    }
  }
  for (const client of Object.values(clients)) client.resources.sort((a, b) => a.name.localeCompare(b.name));
  return { title: doc.info.title, version: doc.info.version, schemas, clients };
}

/** `POST /api/v1/emails/send` → `PostEmailsSend`, `{id}` as `ById`: what the types were named when the operationIds were so. */
export function typeNameOf(verb: string, path: string): string {
  const words = path.slice(PREFIX.length - 1).split('/').filter(Boolean).flatMap((segment) => {
    const param = /^\{(.+)\}$/.exec(segment);
    return param ? ['by', ...param[1]!.split(/[_-]/)] : segment.split(/[_.-]/);
  });
  return [verb, ...words].map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
}

function buildOperation(path: string, verb: (typeof METHODS)[number], op: OpenApiOperation, name: string, schemas: Record<string, Schema>): Operation {
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

  const method = verb.toUpperCase() as Operation['method'];
  return {
    operationId: op.operationId!, name, typeName: typeNameOf(verb, path),
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
