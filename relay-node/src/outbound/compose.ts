// The bytes that leave: a claimed job's message as RFC 5322 (nodemailer's
// MailComposer), DKIM-signed with the from-domain's key (mailauth), the
// DKIM-Signature header first.
import { dkimSign, type DKIMSignOptions } from 'mailauth';
import MailComposer from 'nodemailer/lib/mail-composer';
import type { OutboundDkim, OutboundJob, OutboundMessage } from '../protocol.js';

/**
 * Headers a signature covers when present (lower case). The custom headers of
 * the message are added to these. `h=` lists only those that are there.
 */
export const SIGNED_HEADERS = ['from', 'to', 'cc', 'subject', 'date', 'message-id', 'reply-to', 'mime-version', 'content-type'] as const;

/** The signer refused the key or the message: nothing was signed, nothing must be sent unsigned. */
export class DkimSignError extends Error {
  constructor(readonly domain: string, readonly selector: string, cause: unknown) {
    super(`DKIM signing failed for ${selector}._domainkey.${domain}: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'DkimSignError';
  }
}

/**
 * The message as RFC 5322 bytes (CRLF): From, To, Cc, Reply-To, Subject,
 * Date and Message-ID from the job, text and/or html (multipart/alternative
 * when both), attachments from base64 (multipart/mixed), the custom headers.
 * There is no Bcc header, ever: blind recipients are in the envelope only.
 *
 * @example const bytes = await composeMessage(job.message);
 */
export function composeMessage(message: OutboundMessage): Promise<Buffer> {
  const composer = new MailComposer({
    from: message.from,
    to: message.to.length ? message.to : undefined,
    cc: message.cc.length ? message.cc : undefined,
    replyTo: message.reply_to.length ? message.reply_to : undefined,
    subject: message.subject,
    date: new Date(message.date),
    messageId: message.message_id,
    text: message.text ?? undefined,
    html: message.html ?? undefined,
    // The standard headers above win over a custom header of the same name.
    headers: message.headers,
    attachments: message.attachments.map((a) => ({
      filename: a.filename,
      contentType: a.content_type,
      content: a.content_base64,
      encoding: 'base64',
    })),
    // Content comes from the job only: never a file or a URL of the node.
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return composer.compile().build();
}

/**
 * `bytes` with a DKIM-Signature by `dkim` in front: relaxed/relaxed,
 * rsa-sha256 or ed25519-sha256, over `SIGNED_HEADERS` and `extraHeaders`.
 * Throws DkimSignError when mailauth reports a problem (a bad key).
 */
export async function dkimSignMessage(bytes: Buffer, dkim: OutboundDkim, options: { signTime: Date; extraHeaders?: string[] }): Promise<Buffer> {
  const headerList = [...new Set([...SIGNED_HEADERS, ...(options.extraHeaders ?? []).map((h) => h.toLowerCase())])];
  // mailauth 4.13 reads the keys from signatureData; its typings ask for the top-level fields too.
  // headerList must be a colon-separated string: an array is silently ignored (its default list is used).
  // signTime must be given: without it 4.13 reads the clock twice (the signed t= and the written t=
  // can differ), and about one signature in 450 fails verification.
  const signOptions = {
    canonicalization: 'relaxed/relaxed',
    headerList: headerList.join(':'),
    signTime: options.signTime,
    signatureData: [{
      signingDomain: dkim.domain,
      selector: dkim.selector,
      privateKey: dkim.private_key_pem,
      algorithm: dkim.algorithm === 'ed25519' ? 'ed25519-sha256' : 'rsa-sha256',
      canonicalization: 'relaxed/relaxed',
    }],
  } as unknown as DKIMSignOptions;
  let result: Awaited<ReturnType<typeof dkimSign>>;
  try {
    result = await dkimSign(bytes, signOptions);
  } catch (err) {
    throw new DkimSignError(dkim.domain, dkim.selector, err);
  }
  const errors = result.errors as unknown as { err?: unknown }[];
  if (errors.length) throw new DkimSignError(dkim.domain, dkim.selector, errors[0]?.err ?? errors[0]);
  if (!/^DKIM-Signature:/i.test(result.signatures)) throw new DkimSignError(dkim.domain, dkim.selector, 'no signature produced');
  return Buffer.concat([Buffer.from(result.signatures), bytes]);
}

/**
 * What a job sends: the composed message, signed when the job carries a
 * key (`signTime` is the signature's t=).
 *
 * @example const bytes = await composeSignedMessage(job, { signTime: new Date() });
 */
export async function composeSignedMessage(job: Pick<OutboundJob, 'message' | 'dkim'>, options: { signTime: Date }): Promise<Buffer> {
  const bytes = await composeMessage(job.message);
  if (!job.dkim) return bytes;
  return dkimSignMessage(bytes, job.dkim, { signTime: options.signTime, extraHeaders: Object.keys(job.message.headers) });
}
