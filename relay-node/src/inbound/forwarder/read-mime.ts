// mailparser's MailParser read to the end, as its simpleParser does, but
// keeping the MIME tree it built, so that a structure it only read leniently
// can be named: a multipart without a boundary, or whose boundary never
// occurs, has no parts at all, and what it held is lost to the record.
import type { Readable } from 'node:stream';
import { MailParser, type AttachmentStream, type HeaderLines, type MailParserOptions, type MessageText } from 'mailparser';

export interface MimeAttachment {
  content: Buffer;
  contentType: string;
  filename?: string;
}

export interface ReadMime {
  headerLines: HeaderLines;
  subject: string;
  messageId: string;
  text: string;
  html: string;
  attachments: MimeAttachment[];
  /** Why the MIME tree cannot be read as the sender meant it, or null. */
  defect: string | null;
}

/** A node of MailParser's tree (`parser.tree`, kept after the end; not in its typings). */
interface TreeNode {
  contentType?: string;
  headers?: Map<string, unknown>;
  children?: TreeNode[];
}

/**
 * The first structural defect, depth first: a `multipart/*` part with no
 * `boundary` parameter, or one whose boundary never starts a part (RFC 2046
 * 5.1.1: a multipart has at least one body part). Either way no part below it
 * was read.
 */
export function mimeDefect(node: TreeNode | undefined): string | null {
  if (!node) return null;
  const type = (node.contentType ?? '').toLowerCase();
  if (type.startsWith('multipart/')) {
    const header = node.headers?.get('content-type') as { params?: Record<string, string> } | undefined;
    const boundary = header?.params?.boundary;
    if (!boundary) return `unparseable MIME structure: a ${type} part has no boundary parameter`;
    if (!node.children?.length) return `unparseable MIME structure: the boundary "${boundary.slice(0, 70)}" of a ${type} part never occurs`;
  }
  for (const child of node.children ?? []) {
    const defect = mimeDefect(child);
    if (defect) return defect;
  }
  return null;
}

/** Resolves once the whole message is read; rejects on what mailparser refuses (over 1,000 parts, a part header over 1 MB). */
export function readMime(input: Readable, options: MailParserOptions): Promise<ReadMime> {
  return new Promise((resolve, reject) => {
    const parser = new MailParser(options);
    const result: ReadMime = { headerLines: [], subject: '', messageId: '', text: '', html: '', attachments: [], defect: null };
    // MailParser may emit a non-fatal 'error' and still reach 'end': the first settles.
    let settled = false;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      input.destroy();
      parser.destroy();
      reject(err);
    };
    parser.on('headers', (headers: Map<string, unknown>) => {
      result.headerLines = parser.headerLines || [];
      const subject = headers.get('subject');
      const messageId = headers.get('message-id');
      result.subject = typeof subject === 'string' ? subject : '';
      result.messageId = typeof messageId === 'string' ? messageId : '';
    });
    parser.on('data', (data: AttachmentStream | MessageText) => {
      if (data.type === 'text') {
        result.text = data.text ?? '';
        result.html = typeof data.html === 'string' ? data.html : '';
        return;
      }
      // The parser waits for release() before it reads on: one attachment in memory at a time, as simpleParser.
      const attachment: AttachmentStream = data;
      const chunks: Buffer[] = [];
      attachment.content.on('data', (chunk: Buffer) => chunks.push(chunk));
      attachment.content.on('end', () => {
        result.attachments.push({ content: Buffer.concat(chunks), contentType: attachment.contentType, filename: attachment.filename });
        attachment.release?.();
      });
    });
    parser.on('error', fail);
    parser.on('end', () => {
      if (settled) return;
      settled = true;
      result.defect = mimeDefect((parser as unknown as { tree?: TreeNode }).tree);
      resolve(result);
    });
    input.once('error', fail).pipe(parser);
  });
}
