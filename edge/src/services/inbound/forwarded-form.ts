// Reads the multipart body of `POST /relay/v1/inbound` into a message for
// ingest, or refuses it with 400 naming the part (and, for `meta`, the field).
// Nothing is stored before this has passed.
import { ApiError, badRequest } from '../../http/errors.js';
import { InboundMetaSchema, type InboundMeta } from '../../schemas/inbound-meta.js';

export interface ForwardedParts { meta: InboundMeta; raw: Blob; attachments: Blob[] }

const refuse = (part: string, problem: string) => badRequest(`invalid multipart body: ${part}: ${problem}`, { [part]: problem });

/** A file part: one sent with a filename, which the runtime hands over as bytes rather than text. */
const isFile = (v: File | string | null): v is File => v !== null && typeof v !== 'string';

async function readMeta(form: FormData): Promise<InboundMeta> {
  const entry = form.get('meta');
  if (entry === null) throw refuse('meta', 'required');
  const text = isFile(entry) ? await entry.text() : entry;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw refuse('meta', 'must be JSON');
  }
  const checked = InboundMetaSchema.safeParse(json);
  if (!checked.success) {
    const fields: Record<string, string> = {};
    for (const issue of checked.error.issues) fields[['meta', ...issue.path].join('.')] ??= issue.message;
    const [first] = Object.entries(fields);
    throw new ApiError(400, `invalid meta: ${first![0]}: ${first![1]}`, fields);
  }
  return checked.data;
}

export async function readForwardedParts(request: { header(name: string): string | undefined; formData(): Promise<FormData> }): Promise<ForwardedParts> {
  if (!/^multipart\/form-data\s*;/i.test(request.header('content-type') ?? '')) {
    throw refuse('content-type', 'must be multipart/form-data');
  }
  let form: FormData;
  try {
    form = await request.formData();
  } catch {
    throw refuse('body', 'is not readable multipart/form-data');
  }
  const meta = await readMeta(form);
  const raw = form.get('raw');
  if (!isFile(raw)) throw refuse('raw', raw === null ? 'required' : 'must be a file part (Content-Disposition with a filename)');
  const attachments: Blob[] = [];
  // An unparsed message has no attachments to store; only its raw bytes are kept.
  if (meta.parsed.ok) {
    for (let i = 0; i < meta.parsed.attachments.length; i++) {
      const part = form.get(`attachment.${i}`);
      if (!isFile(part)) throw refuse(`attachment.${i}`, part === null ? 'required: meta.parsed.attachments lists it' : 'must be a file part (Content-Disposition with a filename)');
      attachments.push(part);
    }
  }
  return { meta, raw, attachments };
}
