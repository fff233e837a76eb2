// Reply stripping on the real stack (docs/inbound.md, Reply stripping): a
// corpus message parsed by the relay node's own parser and forwarded over
// the relay path; the record (GET /api/v1/inbound-emails/{id}) and its
// `inbound.received` event carry stripped_text and stripped_signature.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { beforeAll, describe, expect, test } from 'vitest';
import { parseMessage } from '../relay-node/src/inbound/forwarder/parse-message.js';
import { enroll, forward, inboundMeta, makeInstallationWide, registerDomain, type EnrolledNode } from './support/relay.js';
import { useTenantStack } from './support/tenant-stack.js';
import { eventually } from './support/wait.js';

const env = useTenantStack({ keys: { reader: ['inbound:read'] } });
let node: EnrolledNode;

beforeAll(async () => {
  await registerDomain(env.stack, env.tenant.project.id, 'replies.test');
  node = await enroll(env.stack, (await env.tenant.key(['relay:write'])).token);
  await makeInstallationWide(env.stack, node.id);
});

const FIXTURES = join(import.meta.dirname, 'fixtures/replies');

/** Forwards a corpus message as a node would: its bytes, and its parts as the node's parser reads them. */
async function forwardFixture(name: string) {
  const raw = readFileSync(join(FIXTURES, `${name}.eml`));
  const { parsed } = await parseMessage(Readable.from([raw]));
  const meta = inboundMeta(['support@replies.test'], { parsed: { ...parsed, attachments: [] } });
  const reply = await forward(env.stack, node.token, { meta, raw });
  expect(reply.status).toBe(200);
  return (reply.body as { inbound_emails: { id: string }[] }).inbound_emails[0]!.id;
}

async function get(id: string) {
  const res = await fetch(`${env.stack.url}/api/v1/inbound-emails/${id}`, { headers: { authorization: `Bearer ${env.keys.reader}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { inbound_email: Record<string, unknown> }).inbound_email;
}

async function eventData(id: string) {
  const rows = await eventually(async () => (await env.stack.sql.query(
    `SELECT data FROM outbox WHERE event = 'inbound.received' AND data->>'id' = $1`, [id])).rows, (r) => r.length === 1);
  return rows[0].data as Record<string, unknown>;
}

describe('reply stripping at ingest', () => {
  test('a Gmail reply with a signature: the reply, its signature apart, on the record and in the event', async () => {
    const id = await forwardFixture('gmail-en-wrapped-header-signature');
    const want = { stripped_text: 'Paid this morning, the receipt is attached.', stripped_signature: '--\nAnn Smith\nAccounts, ACME Ltd.' };
    const record = await get(id);
    expect(record).toMatchObject(want);
    expect(record.text_body).toContain('invoice 1043 is due');
    const data = await eventData(id);
    expect(data).toMatchObject(want);
    expect(data).not.toHaveProperty('text_body');
  });

  test('an HTML-only Outlook reply: the text comes from the HTML; no signature is null', async () => {
    const outlook = await get(await forwardFixture('html-outlook-en-signature'));
    expect(outlook).toMatchObject({ text_body: '', stripped_text: 'Approved.', stripped_signature: 'Kind regards,\nAnn' });
    const id = await forwardFixture('html-gmail-en');
    expect(await get(id)).toMatchObject({ stripped_text: 'Two tickets, please.', stripped_signature: null });
    expect(await eventData(id)).toMatchObject({ stripped_text: 'Two tickets, please.', stripped_signature: null });
  });
});
