// Reads the head of `POST /relay/v1/inbound/batch` (docs/relay-protocol.md):
// every message's meta JSON first, then each message's raw bytes and
// attachments, with each piece's length in two headers. A refusal of the
// batch as a whole (its framing) is thrown, before anything is stored; a
// message whose own meta or length is wrong is refused on its own, and its
// bytes are skipped, so that it never costs the others their forward.
import {
  FORWARD_BATCH_CONTENT_TYPE,
  FORWARD_BATCH_MAX_MESSAGES,
  MESSAGE_LENGTHS_HEADER,
  META_LENGTHS_HEADER,
} from '@edgemail/shared';
import { invalid, tooLarge, unsupportedMediaType, type ServiceError } from '../errors.js';
import type { InboundMeta } from '../../contracts/inbound-meta.js';
import { ExactReader } from './exact-reader.js';
import { parseMeta } from './forwarded-body.js';

export interface BatchEntry {
  /** The message's meta, or null when `refusal` is set. */
  meta: InboundMeta | null;
  /** Why this message alone is refused (a 400 as the single route would give), or null. */
  refusal: ServiceError | null;
  /** Byte length of its raw message and attachments in the body. */
  length: number;
}

export interface ForwardedBatch {
  entries: BatchEntry[];
  /** After the metas: each message's raw bytes and attachments, in order. */
  rest: ExactReader;
}

const refuse = (field: string, problem: string) => invalid(`invalid body: ${field}: ${problem}`, { [field]: problem });

/** A header of comma-separated byte counts, one per message. */
function lengthsHeader(request: Request, name: string): number[] {
  const text = request.headers.get(name);
  if (text === null || !text.trim()) throw refuse(name, 'required: one byte count per message, comma-separated');
  const parts = text.split(',').map((p) => p.trim());
  if (!parts.every((p) => /^\d{1,15}$/.test(p))) throw refuse(name, 'must be byte counts, comma-separated');
  return parts.map(Number);
}

/**
 * How many messages a batch announces (its `Edgemail-Meta-Lengths`), for the
 * rate limiter: each counts as one forward. One when the header is unreadable
 * (the handler then refuses the batch with 400).
 */
export function announcedMessages(request: Request): number {
  const text = request.headers.get(META_LENGTHS_HEADER) ?? '';
  const count = text.split(',').length;
  return /^[\d\s,]+$/.test(text) && count <= FORWARD_BATCH_MAX_MESSAGES ? count : 1;
}

/**
 * @example const { entries, rest } = await readForwardedBatch(c.req.raw, { maxMetaBytes });
 */
export async function readForwardedBatch(request: Request, limits: { maxMetaBytes: number }): Promise<ForwardedBatch> {
  const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== FORWARD_BATCH_CONTENT_TYPE) {
    throw unsupportedMediaType(`unsupported content-type ${type || '(none)'}: the body must be ${FORWARD_BATCH_CONTENT_TYPE}`, { 'content-type': `must be ${FORWARD_BATCH_CONTENT_TYPE}` });
  }
  const metaLengths = lengthsHeader(request, META_LENGTHS_HEADER);
  const messageLengths = lengthsHeader(request, MESSAGE_LENGTHS_HEADER);
  if (metaLengths.length > FORWARD_BATCH_MAX_MESSAGES) throw refuse(META_LENGTHS_HEADER, `must list at most ${FORWARD_BATCH_MAX_MESSAGES} messages, got ${metaLengths.length}`);
  if (messageLengths.length !== metaLengths.length) {
    throw refuse(MESSAGE_LENGTHS_HEADER, `must list as many messages as ${META_LENGTHS_HEADER} (${metaLengths.length}), got ${messageLengths.length}`);
  }
  if (metaLengths.some((n) => n === 0)) throw refuse(META_LENGTHS_HEADER, 'must be byte counts above 0');
  // The metas are held at once: together they get the one meta's limit.
  const metaBytes = metaLengths.reduce((a, b) => a + b, 0);
  if (metaBytes > limits.maxMetaBytes) {
    throw tooLarge(`metas larger than ${limits.maxMetaBytes} bytes together (${META_LENGTHS_HEADER}: ${metaBytes}): forward fewer messages at once`);
  }
  const announced = metaBytes + messageLengths.reduce((a, b) => a + b, 0);
  const contentLength = Number(request.headers.get('content-length') ?? 0);
  if (contentLength !== announced) {
    throw refuse('content-length', `must be ${announced} (the metas' and the messages' lengths), got ${contentLength}`);
  }
  if (!request.body) throw refuse('body', 'required');

  const rest = new ExactReader(request.body);
  const entries: BatchEntry[] = [];
  for (const [i, metaLength] of metaLengths.entries()) {
    const bytes = await rest.read(metaLength, `meta ${i}`);
    const length = messageLengths[i]!;
    try {
      const meta = parseMeta(bytes);
      const pieces = meta.size + meta.parsed.attachments.reduce((sum, a) => sum + (meta.parsed.ok ? a.size : 0), 0);
      if (pieces !== length) {
        entries.push({ meta: null, refusal: refuse(MESSAGE_LENGTHS_HEADER, `message ${i}: must be ${pieces} (raw ${meta.size} + the attachments' sizes), got ${length}`), length });
      } else {
        entries.push({ meta, refusal: null, length });
      }
    } catch (err) {
      entries.push({ meta: null, refusal: err as ServiceError, length });
    }
  }
  return { entries, rest };
}

/** A discarding sink, for a refused message's bytes. */
const discard = () => new WritableStream<Uint8Array>();

/**
 * One message's bytes of a batch, as ingest reads a single forward's body:
 * its pieces piped on in turn, and `drain` reading what is left of this
 * message only (not of the whole body).
 */
export class PieceReader {
  #left: number;

  constructor(private readonly reader: ExactReader, length: number) {
    this.#left = length;
  }

  async pipe(n: number, writable: WritableStream<Uint8Array>, what: string): Promise<void> {
    if (n > this.#left) throw new Error(`${what}: ${n} bytes announced, ${this.#left} left of the message`);
    this.#left -= n;
    await this.reader.pipe(n, writable, what);
  }

  async drain(): Promise<void> {
    const n = this.#left;
    this.#left = 0;
    if (n) await this.reader.pipe(n, discard(), 'skipped message');
  }
}
