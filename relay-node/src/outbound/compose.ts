// The bytes that leave: a claimed job's message as RFC 5322 (nodemailer's
// MailComposer), every address header composed from one parsed mailbox per
// entry, DKIM-signed with the from-domain's key (mailauth) with the headers
// that occur once oversigned, the DKIM-Signature header first.
import { createHash, sign, type KeyObject } from 'node:crypto';
import { createRequire } from 'node:module';
import type { DKIMSignOptions } from 'mailauth';
import addressparser from 'nodemailer/lib/addressparser';
import MailComposer from 'nodemailer/lib/mail-composer';
import type { OutboundDkim, OutboundJob, OutboundMessage } from '@edgemail/shared';
import { signingKey } from './signing-key.js';

/**
 * Headers a signature covers when present (lower case). The custom headers of
 * the message are added to these.
 */
export const SIGNED_HEADERS = ['from', 'to', 'cc', 'subject', 'date', 'message-id', 'reply-to', 'mime-version', 'content-type'] as const;

/**
 * Oversigning (RFC 6376 8.15): these are listed in `h=` once more than they
 * occur, so a copy added in transit (a second From above ours, a Reply-To the
 * message never had) breaks the signature instead of riding on it. As
 * rspamd's defaults: `ALWAYS` even when absent, `IF_PRESENT` when there.
 */
export const OVERSIGNED_ALWAYS = ['from', 'reply-to', 'to', 'cc', 'subject'] as const;
export const OVERSIGNED_IF_PRESENT = ['date', 'message-id', 'mime-version', 'content-type'] as const;

/** The job's message names something other than exactly one mailbox in an address entry: nothing is composed. */
export class AddressRefusedError extends Error {
  constructor(readonly field: string, readonly value: string) {
    super(`${field} must be exactly one mailbox, not ${JSON.stringify(value.slice(0, 200))}`);
    this.name = 'AddressRefusedError';
  }
}

/**
 * One address entry of the job as `{name, address}` for the composer, which
 * then quotes or encodes the name itself (RFC 5322, RFC 2047). The edge sends
 * entries it composed from one parsed mailbox; a list or group here (a row
 * written before that rule) is refused, never passed on as text.
 */
export function oneMailbox(field: string, value: string): { name: string; address: string } {
  const parsed = addressparser(value);
  const only = parsed.length === 1 ? parsed[0]! : null;
  if (!only || 'group' in only || !only.address || !/^[^@\s]+@[^@\s]+$/.test(only.address)) throw new AddressRefusedError(field, value);
  return { name: only.name, address: only.address };
}

/** The signer refused the key or the message: nothing was signed, nothing must be sent unsigned. */
export class DkimSignError extends Error {
  constructor(readonly domain: string, readonly selector: string, cause: unknown) {
    super(`DKIM signing failed for ${selector}._domainkey.${domain}: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'DkimSignError';
  }
}

const OFFSET = /([+-])(\d{2}):(\d{2})$/;

/**
 * The Date header for the job's RFC 3339 `date`, in its own offset: a
 * submitted message keeps its client's zone (`2003-07-01T10:52:37+02:00` →
 * `Tue, 01 Jul 2003 10:52:37 +0200`); `Z` is `+0000`, as nodemailer writes.
 */
export function headerDate(rfc3339: string): string {
  const instant = Date.parse(rfc3339);
  const m = OFFSET.exec(rfc3339);
  const minutes = m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
  const zone = m ? `${m[1]}${m[2]}${m[3]}` : '+0000';
  return new Date(instant + minutes * 60_000).toUTCString().replace(/GMT$/, zone);
}

/**
 * The message as RFC 5322 bytes (CRLF): From, To, Cc, Reply-To, Subject,
 * Date and Message-ID from the job (each address entry exactly one mailbox,
 * else AddressRefusedError), text and/or html (multipart/alternative
 * when both), attachments from base64 (multipart/mixed), the custom headers.
 * There is no Bcc header, ever: blind recipients are in the envelope only.
 *
 * @example const bytes = await composeMessage(job.message);
 */
export async function composeMessage(message: OutboundMessage): Promise<Buffer> {
  const list = (field: string, values: string[]) => (values.length ? values.map((v, i) => oneMailbox(`${field}.${i}`, v)) : undefined);
  const composer = new MailComposer({
    from: oneMailbox('from', message.from),
    to: list('to', message.to),
    cc: list('cc', message.cc),
    replyTo: list('reply_to', message.reply_to),
    subject: message.subject,
    date: headerDate(message.date),
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

interface ParsedHeader { key: string; casedKey: string; line: Buffer }
interface SignatureData { signingDomain: string; selector: string; privateKey: string; algorithm: string; canonicalization: string; maxBodyLength: number | '' }
interface SignerInstance {
  headers: { parsed: ParsedHeader[] };
  headerList: string;
  signTime: Date;
  signatureData: SignatureData[];
  bodyHashes: Map<string, { hash: string | null }>;
  signatureHeaders: string[];
  errors: { err?: unknown }[];
  messageHeaders(headers: { parsed: ParsedHeader[] }): Promise<void>;
  finalize(): Promise<void>;
}
interface SignerModule { DkimSigner: new (options: DKIMSignOptions) => SignerInstance }
interface SigningHeaderLines { keys: string; headers: ParsedHeader[] }

// mailauth 4.13 exports `dkimSign`, which writes `h=` from the headers present only; its signer
// class (the one `dkimSign` runs) is extended below to add the oversigned names, and to sign with
// a key parsed once (signing-key.ts): it takes keys as text only and parses them for every signature.
const requireCjs = createRequire(import.meta.url);
const { DkimSigner } = requireCjs('mailauth/lib/dkim/dkim-signer') as SignerModule;
const { writeToStream, getSigningHeaderLines, formatSignatureHeaderLine } = requireCjs('mailauth/lib/tools') as {
  writeToStream: (stream: unknown, input: Buffer) => Promise<void>;
  getSigningHeaderLines: (parsed: ParsedHeader[], fieldNames: string) => SigningHeaderLines;
  formatSignatureHeaderLine: (type: 'DKIM', values: Record<string, unknown>, folded: boolean) => string;
};
const { generateCanonicalizedHeader } = requireCjs('mailauth/lib/dkim/header') as {
  generateCanonicalizedHeader: (type: 'DKIM', lines: SigningHeaderLines, options: Record<string, unknown>) => { canonicalizedHeader: Buffer; dkimHeaderOpts: Record<string, unknown> };
};

/**
 * The parsed headers with the oversigned names added to `h=`: the signer
 * writes an entry's `casedKey` into `h=` and hashes its line once, so a
 * name appended to the key of its topmost occurrence (the last the signer
 * takes) is listed once more at no cost to the hash, as a verifier expects
 * of a name with no occurrence left. A name that is absent goes on From's.
 */
export function withOversignedNames(parsed: ParsedHeader[], signed: readonly string[]): ParsedHeader[] {
  const out = parsed.map((h) => ({ ...h }));
  const topmost = (name: string) => out.find((h) => h.key === name);
  const from = topmost('from');
  if (!from) throw new Error('the message has no From header');
  const absent: string[] = [];
  for (const name of [...OVERSIGNED_ALWAYS, ...OVERSIGNED_IF_PRESENT]) {
    if (!signed.includes(name)) continue;
    const header = topmost(name);
    if (header) header.casedKey = `${header.casedKey}: ${header.casedKey}`;
    else if ((OVERSIGNED_ALWAYS as readonly string[]).includes(name)) absent.push(name);
  }
  if (absent.length) from.casedKey = [from.casedKey, ...absent.map(canonicalCase)].join(': ');
  return out;
}

const canonicalCase = (name: string) => name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());

/**
 * mailauth's signer with `withOversignedNames` applied to the headers it read,
 * making its one DKIM signature with `key` (already parsed).
 */
class OversigningDkimSigner extends DkimSigner {
  constructor(options: DKIMSignOptions, private readonly signed: readonly string[], private readonly key: KeyObject) {
    super(options);
  }

  override async messageHeaders(headers: { parsed: ParsedHeader[] }): Promise<void> {
    await super.messageHeaders(headers);
    this.headers = { ...headers, parsed: withOversignedNames(headers.parsed, this.signed) };
  }

  /**
   * mailauth 4.13's finalize for the one signature `dkimSignMessage` asks for
   * (DKIM, relaxed/relaxed, sha256, no l=), its header canonicalisation and
   * formatting, with `key` in place of the PEM it would parse again.
   */
  override async finalize(): Promise<void> {
    const data = this.signatureData[0]!;
    const [signAlgo, hashAlgo] = data.algorithm.split('-') as [string, string];
    try {
      if (this.key.asymmetricKeyType !== signAlgo) throw new Error(`Invalid key type: "${this.key.asymmetricKeyType}" (expecting "${signAlgo}")`);
      const bodyCanon = data.canonicalization.split('/')[1]!;
      const { canonicalizedHeader, dkimHeaderOpts } = generateCanonicalizedHeader('DKIM', getSigningHeaderLines(this.headers.parsed, this.headerList), {
        ...data,
        instance: false,
        signTime: this.signTime,
        bodyHash: this.bodyHashes.get(`${bodyCanon}:${hashAlgo}:${data.maxBodyLength}`)?.hash ?? null,
      });
      // ed25519-sha256 signs the SHA-256 of the canonical header (RFC 8463), rsa-sha256 the header itself.
      dkimHeaderOpts.b = (signAlgo === 'rsa'
        ? sign(data.algorithm, canonicalizedHeader, this.key)
        : sign(null, createHash('sha256').update(canonicalizedHeader).digest(), this.key)).toString('base64');
      this.signatureHeaders.push(formatSignatureHeaderLine('DKIM', dkimHeaderOpts, true));
    } catch (err) {
      this.errors.push({ err });
    }
  }
}

/**
 * `bytes` with a DKIM-Signature by `dkim` in front: relaxed/relaxed,
 * rsa-sha256 or ed25519-sha256, over `SIGNED_HEADERS` and `extraHeaders`,
 * oversigning `OVERSIGNED_ALWAYS` and `OVERSIGNED_IF_PRESENT`.
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
  let signer: OversigningDkimSigner;
  try {
    signer = new OversigningDkimSigner(signOptions, headerList, signingKey(dkim.private_key_pem));
    await writeToStream(signer, bytes);
  } catch (err) {
    throw new DkimSignError(dkim.domain, dkim.selector, err);
  }
  const errors = signer.errors;
  if (errors.length) throw new DkimSignError(dkim.domain, dkim.selector, errors[0]?.err ?? errors[0]);
  const signatures = signer.signatureHeaders.join('\r\n');
  if (!/^DKIM-Signature:/i.test(signatures)) throw new DkimSignError(dkim.domain, dkim.selector, 'no signature produced');
  return Buffer.concat([Buffer.from(`${signatures}\r\n`), bytes]);
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
