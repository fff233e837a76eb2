// Names every operation of the api (`/api/v1`) and console (`/app/api`)
// OpenAPI documents from its path, in one place, so that client generators
// (ours in clients/, and any third-party one) read the names instead of
// guessing them: `operationId` is `<resource>_<method>` (`inboundEmails_list`,
// `emails_send`, `adminUsers_setPassword`), the one tag is the resource's title
// ("Inbound emails", "Admin: users"), and the document lists each tag with a
// description. Route files name neither (`tags` in a declaration is ignored).

/** The parts of an OpenAPI 3.1 document the naming reads and writes. */
interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
}
interface Operation {
  operationId?: string;
  tags?: string[];
  parameters?: { name: string; in: string }[];
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}
export interface NamedDocument {
  paths: Record<string, unknown>;
  components?: { schemas?: Record<string, unknown> };
  tags?: { name: string; description: string }[];
}

/** A resource's tag: its title and what it is, as the document lists it. */
export type ResourceTags = Record<string, { title: string; description: string }>;

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
type Verb = (typeof METHODS)[number];

const camel = (words: string[]) =>
  words.map((w, i) => (i === 0 ? w.charAt(0).toLowerCase() + w.slice(1) : w.charAt(0).toUpperCase() + w.slice(1))).join('');
const wordsOf = (segment: string) => segment.split(/[-_]/).filter(Boolean);
const isParam = (segment: string) => segment.startsWith('{');
const singular = (word: string) => (word.endsWith('s') ? word.slice(0, -1) : word);

/** The resource and method an operation is named by, and the id they make. */
export interface OperationName { resource: string; method: string; operationId: string }

/**
 * The names of every operation under `prefix` (`/api/v1/`, `/app/api/`), keyed
 * `<verb> <path>`. Under `/api/v1/admin/` the resource is prefixed `admin`
 * (`adminUsers`): the admin client is a client of its own, and the prefix
 * keeps its ids apart from the project's in the one document.
 *
 * - resource: the shortest leading run of literal segments that is itself a
 *   route (`emails` for /emails/send; `relay/nodes` → `relayNodes`, as /relay
 *   is none) — except that a run ending on a path that holds a lone POST and
 *   nothing beneath it is an action of what precedes it (/invitations/accept
 *   → `invitations`, `accept`);
 * - method, from the path past the resource: `list`/`get`/`create`/`set`/
 *   `update`/`delete` on the resource itself, the action of a POST that is not a
 *   collection (`send`, `rotateSecret`, `redeliver`), verb + sub-resource
 *   otherwise (`listDeliveries`, `getRaw`, `createVersion`). A GET is a `list`
 *   when it pages (a `next` cursor or an `offset` parameter) or answers one
 *   array named as the path ends.
 *
 * Throws when two operations would get one name, naming both.
 */
export function operationNames(doc: NamedDocument, prefix: string): Map<string, OperationName> {
  const schemas = (doc.components?.schemas ?? {}) as Record<string, Schema>;
  const entries: { path: string; verb: Verb; op: Operation }[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    if (!path.startsWith(prefix)) continue;
    for (const verb of METHODS) {
      const op = (item as Partial<Record<Verb, Operation>>)[verb];
      if (op) entries.push({ path, verb, op });
    }
  }
  const paths = new Set(entries.map((e) => e.path));
  const getPaths = new Set(entries.filter((e) => e.verb === 'get').map((e) => e.path));
  const isLoneAction = (path: string) =>
    entries.filter((e) => e.path === path).length === 1 && !entries.some((e) => e.path.startsWith(`${path}/`));

  const names = new Map<string, OperationName>();
  const taken = new Map<string, string>();
  for (const { path, verb, op } of entries) {
    const all = path.slice(prefix.length).split('/');
    const admin = prefix === '/api/v1/' && all[0] === 'admin';
    const segments = admin ? all.slice(1) : all;
    const base = admin ? `${prefix}admin/` : prefix;
    let take = 1;
    while (take < segments.length && !isParam(segments[take]!) && !paths.has(base + segments.slice(0, take).join('/'))) take++;
    // A path the run had to grow into, holding one POST and nothing beneath it, is an action on what precedes it.
    if (take > 1 && take === segments.length && verb === 'post' && isLoneAction(path)) take--;
    const resource = camel([...(admin ? ['admin'] : []), ...segments.slice(0, take).flatMap(wordsOf)]);
    const method = methodName(verb, path, segments.slice(take), isList(path, verb, op, schemas), getPaths);
    const operationId = `${resource}_${method}`;
    const label = `${verb.toUpperCase()} ${path}`;
    const clash = taken.get(operationId);
    if (clash) throw new Error(`${label} and ${clash} would both be named ${operationId}`);
    taken.set(operationId, label);
    names.set(`${verb} ${path}`, { resource, method, operationId });
  }
  return names;
}

/**
 * Names the operations under `prefix` in place (operationId and the one tag)
 * and lists the tags at the top of the document. Throws on a resource with no
 * title and description in `titles`, naming it, so no operation is published
 * under a made-up title.
 */
export function nameOperations(doc: NamedDocument, prefix: string, titles: ResourceTags): void {
  const names = operationNames(doc, prefix);
  const used = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const verb of METHODS) {
      const op = (item as Partial<Record<Verb, Operation>>)[verb];
      const name = op && names.get(`${verb} ${path}`);
      if (!op || !name) continue;
      const tag = titles[name.resource];
      if (!tag) throw new Error(`${verb.toUpperCase()} ${path}: resource ${name.resource} has no title and description in edge/src/http/resource-tags.ts`);
      op.operationId = name.operationId;
      op.tags = [tag.title];
      used.add(name.resource);
    }
  }
  // The project's resources first, then the platform's (`admin…`), each alphabetically.
  const order = (r: string) => `${/^admin[A-Z]/.test(r) ? 1 : 0}${titles[r]!.title}`;
  doc.tags = [...used].sort((a, b) => order(a).localeCompare(order(b)))
    .map((r) => ({ name: titles[r]!.title, description: titles[r]!.description }));
}

const resolve = (schema: Schema, schemas: Record<string, Schema>): Schema =>
  schema.$ref ? resolve(schemas[schema.$ref.slice(schema.$ref.lastIndexOf('/') + 1)] ?? {}, schemas) : schema;

/**
 * A GET answering an object with exactly one array lists when it pages (`next`
 * or an `offset` parameter), or when the array is named as the path ends
 * (`api_keys` for /api-keys); one merely holding an array (/project/sso) gets.
 */
function isList(path: string, verb: Verb, op: Operation, schemas: Record<string, Schema>): boolean {
  if (verb !== 'get') return false;
  const ok = Object.keys(op.responses ?? {}).map(Number).filter((s) => s >= 200 && s < 300).sort((a, b) => a - b)[0];
  const [type, media] = Object.entries(op.responses?.[String(ok)]?.content ?? {})[0] ?? [];
  if (type !== 'application/json' || !media?.schema) return false;
  const answer = resolve(media.schema, schemas);
  const arrays = Object.entries(answer.properties ?? {}).filter(([, s]) => resolve(s, schemas).type === 'array');
  if (arrays.length !== 1) return false;
  const items = arrays[0]![0];
  if (answer.properties?.next || op.parameters?.some((p) => p.in === 'query' && p.name === 'offset')) return true;
  const last = path.split('/').filter((s) => !isParam(s)).pop() ?? '';
  return items === last.replace(/-/g, '_') || items.endsWith(`_${last}`);
}

function methodName(verb: Verb, path: string, rest: string[], list: boolean, getPaths: Set<string>): string {
  const literals = rest.filter((s) => !isParam(s));
  const endsOnParam = rest.length > 0 && isParam(rest[rest.length - 1]!);
  // Only the last literal names the sub-resource: templates/{t}/versions/{v}/localizations → localizations.
  const words = literals.length ? wordsOf(literals[literals.length - 1]!) : [];
  if (endsOnParam && words.length) words.push(singular(words.pop()!));
  const verbs = { get: list ? 'list' : 'get', post: 'create', put: 'set', patch: 'update', delete: 'delete' } as const;
  if (verb === 'post' && literals.length && !getPaths.has(path)) return camel(wordsOf(literals[literals.length - 1]!));
  if (verb === 'post' && literals.length && !endsOnParam) words.push(singular(words.pop()!)); // a POST to a sub-collection creates one
  return camel([verbs[verb], ...words]);
}
