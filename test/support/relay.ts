// Speaking to /relay/v1 as a relay node does: enrolment with a project key,
// then calls with the node credential, and inbound forwarding.
import type { Reply, TestStack } from './stack.js';

export interface EnrolledNode { id: string; token: string; node: Record<string, any> }

export async function enroll(stack: TestStack, keyToken: string, name = `mx-${crypto.randomUUID().slice(0, 8)}`): Promise<EnrolledNode> {
  const r = await stack.call('POST', '/relay/v1/enroll', { token: keyToken, body: { name, version: '0.1.0' } });
  if (r.status !== 201) throw new Error(`enrolment failed: ${r.status} ${JSON.stringify(r.body)}`);
  return { id: r.body.node.id, token: r.body.token, node: r.body.node };
}

/** Widens a node to every project's domains, as `edgemail relay scope --installation-wide` does. */
export async function makeInstallationWide(stack: TestStack, nodeId: string): Promise<void> {
  await stack.sql.query('UPDATE relay_nodes SET installation_wide = true WHERE id = $1', [nodeId]);
}

export const LISTENERS = [{ name: 'inbound', port: 2525, tls: 'starttls', proxy_protocol: false }];

export function heartbeat(stack: TestStack, token: string, body: Record<string, unknown> = {}) {
  return stack.call('POST', '/relay/v1/heartbeat', {
    token, body: { version: '0.1.0', listeners: LISTENERS, tls: { source: 'self_signed', not_after: '2027-11-26T00:00:00.000Z' }, spool_depth: 0, ...body },
  });
}

/** A registered domain whose ownership is proven, written directly (the domains API is not under test here). */
export async function registerDomain(stack: TestStack, projectId: string, name: string): Promise<string> {
  const { rows: [row] } = await stack.sql.query('INSERT INTO domains (project_id, name, ownership_proven_at) VALUES ($1, $2, now()) RETURNING id', [projectId, name]);
  return row.id;
}

export interface Forwarded {
  meta: Record<string, unknown>;
  raw: string | Uint8Array;
  attachments?: { bytes: string | Uint8Array; type: string }[];
}

/** A `meta` for a message from `from` to `to`, parsed fine, with `overrides` merged on top. */
export function inboundMeta(to: string[], overrides: Record<string, unknown> = {}): Record<string, any> {
  return {
    spool_id: `${Date.now().toString(16).padStart(16, '0')}-${crypto.randomUUID().slice(-12)}`,
    received_at: new Date().toISOString(),
    client_ip: '203.0.113.9',
    helo: 'mail.example.org',
    mail_from: 'ann@example.org',
    rcpt_to: to,
    size: 0,
    auth: { spf: 'pass', dkim: 'pass', dmarc: 'pass', aligned: true, client_ip: '203.0.113.9' },
    dmarc_policy: 'none',
    smtp_rejected: false,
    parsed: {
      ok: true, error: null, message_id: '<abc@example.org>', subject: 'Hello', text: 'Hi there', html: '<p>Hi there</p>',
      headers: { from: 'Ann <ann@example.org>', subject: 'Hello' }, attachments: [],
    },
    ...overrides,
  };
}

/**
 * The body a node sends (docs/relay-protocol.md): the meta JSON, then the raw
 * message, then each attachment, back to back. `meta.size` and each
 * attachment's `size` are set to the bytes' own lengths, as a node sets them.
 */
export function inboundBody(message: Forwarded): { body: Uint8Array<ArrayBuffer>; headers: Record<string, string> } {
  const bytes = (b: string | Uint8Array) => (typeof b === 'string' ? new TextEncoder().encode(b) : b);
  const raw = bytes(message.raw);
  const attachments = (message.attachments ?? []).map((a) => bytes(a.bytes));
  const meta: Record<string, unknown> = { ...message.meta, size: raw.byteLength };
  const parsed = meta.parsed as Record<string, any> | undefined;
  if (parsed && Array.isArray(parsed.attachments)) {
    meta.parsed = { ...parsed, attachments: parsed.attachments.map((a: Record<string, unknown>, i: number) => ({ ...a, size: attachments[i]?.byteLength ?? a.size })) };
  }
  const metaBytes = new TextEncoder().encode(JSON.stringify(meta));
  const body = new Uint8Array(Buffer.concat([metaBytes, raw, ...attachments]));
  return { body, headers: { 'content-type': 'application/vnd.edgemail.inbound', 'edgemail-meta-length': String(metaBytes.byteLength) } };
}

/** `POST /relay/v1/inbound` with a node's body, or with exactly the body and headers given. */
export async function forward(stack: TestStack, token: string, message: Forwarded | { body: BodyInit; headers: Record<string, string> }, headers: Record<string, string> = {}): Promise<Reply> {
  const sent = 'meta' in message ? inboundBody(message) : message;
  const res = await fetch(`${stack.url}/relay/v1/inbound`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, ...sent.headers, ...headers },
    body: sent.body,
  });
  const text = await res.text();
  let parsed: unknown = text;
  try { parsed = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** The meta of a forward a relay node is making (the `init` its fetch got), for tests that watch the wire; null for other calls. */
export async function metaOfForward(input: unknown, init: RequestInit | undefined): Promise<Record<string, any> | null> {
  const length = new Headers(init?.headers).get('edgemail-meta-length');
  if (!String(input).endsWith('/relay/v1/inbound') || length === null) return null;
  // A small message goes as one in-memory buffer, a large one as a file-backed Blob: the same bytes either way.
  const body = init?.body;
  if (body instanceof Blob) return JSON.parse(await body.slice(0, Number(length)).text());
  if (body instanceof Uint8Array) return JSON.parse(new TextDecoder().decode(body.subarray(0, Number(length))));
  return null;
}
