// Reads the head of `POST /relay/v1/inbound` (docs/relay-protocol.md): the
// meta JSON, whose length the `Edgemail-Meta-Length` header gives, and checks
// that the body holds exactly the raw message and attachments the meta
// announces. The bytes after the meta are left in the stream for ingest to
// pass on to R2: nothing but the meta is ever held whole in the isolate.
// Nothing is stored before this has passed.
import { invalid, tooLarge, unsupportedMediaType } from '../errors.js';
import { FORWARD_CONTENT_TYPE, InboundMetaSchema, META_LENGTH_HEADER, type InboundMeta } from '../../contracts/inbound-meta.js';
import { ExactReader } from './exact-reader.js';

export interface ForwardedBody {
  meta: InboundMeta;
  /** After the meta: the raw message (`meta.size` bytes), then each attachment (`meta.parsed.attachments[i].size`). */
  rest: ExactReader;
}

const refuse = (field: string, problem: string) => invalid(`invalid body: ${field}: ${problem}`, { [field]: problem });

export function parseMeta(bytes: Uint8Array): InboundMeta {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw refuse('meta', 'must be JSON');
  }
  const checked = InboundMetaSchema.safeParse(json);
  if (!checked.success) {
    const fields: Record<string, string> = {};
    for (const issue of checked.error.issues) fields[['meta', ...issue.path].join('.')] ??= issue.message;
    const [first] = Object.entries(fields);
    throw invalid(`invalid meta: ${first![0]}: ${first![1]}`, fields);
  }
  return checked.data;
}

/** A header that must be a non-negative decimal integer. */
function lengthHeader(request: Request, name: string): number | null {
  const text = request.headers.get(name);
  if (text === null) return null;
  if (!/^\d{1,15}$/.test(text.trim())) throw refuse(name, 'must be a byte count');
  return Number(text.trim());
}

/**
 * @example const { meta, rest } = await readForwardedBody(c.req.raw, { maxMetaBytes });
 */
export async function readForwardedBody(request: Request, limits: { maxMetaBytes: number }): Promise<ForwardedBody> {
  const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  // 415, not 400: a node older than this edge sends multipart/form-data, and
  // keeps (and retries) a message refused so rather than dead-lettering it.
  if (type !== FORWARD_CONTENT_TYPE) {
    throw unsupportedMediaType(`unsupported content-type ${type || '(none)'}: the body must be ${FORWARD_CONTENT_TYPE} (a relay node older than the edge sends multipart/form-data: upgrade it)`, { 'content-type': `must be ${FORWARD_CONTENT_TYPE}` });
  }
  const metaLength = lengthHeader(request, META_LENGTH_HEADER);
  if (metaLength === null || metaLength === 0) throw refuse(META_LENGTH_HEADER, 'required: the byte length of the meta JSON at the start of the body');
  if (metaLength > limits.maxMetaBytes) {
    throw tooLarge(`meta larger than ${limits.maxMetaBytes} bytes (${META_LENGTH_HEADER}: ${metaLength}): forward the raw message alone`);
  }
  // Present (the route's middleware answers 411 otherwise) and within the body limit.
  const contentLength = lengthHeader(request, 'content-length') ?? 0;
  // Before the meta's buffer is allocated: a length the body cannot hold is refused, not read.
  if (metaLength > contentLength) {
    throw refuse(META_LENGTH_HEADER, `must be at most the body's length (content-length ${contentLength}), got ${metaLength}`);
  }
  if (!request.body) throw refuse('body', 'required');

  const rest = new ExactReader(request.body);
  const meta = parseMeta(await rest.read(metaLength, 'meta'));
  const announced = metaLength + meta.size + meta.parsed.attachments.reduce((sum, a) => sum + (meta.parsed.ok ? a.size : 0), 0);
  if (contentLength !== announced) {
    throw refuse('content-length', `must be ${announced} (meta ${metaLength} + raw ${meta.size} + the attachments' sizes), got ${contentLength}`);
  }
  return { meta, rest };
}
