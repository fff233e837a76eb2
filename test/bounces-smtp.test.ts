// A refusal during delivery (the receiving server's own 5xx, reported by the
// relay node in /relay/v1/outbound/results) is a bounce record too, written
// by the statement that fails the row (docs/bounces.md, "Sources").
import { beforeAll, describe, expect, test } from 'vitest';
import { enroll, type EnrolledNode } from './support/relay.js';
import { useTenantStack } from './support/tenant-stack.js';

const env = useTenantStack({
  keys: { sender: ['emails:write', 'bounces:read'], admin: ['domains:write', 'relay:write'] },
});

let node: EnrolledNode;

beforeAll(async () => {
  const created = await env.stack.call('POST', '/api/v1/domains', { token: env.keys.admin, body: { name: 'acme.test' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  await env.stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [created.body.domain.id]);
  node = await enroll(env.stack, env.keys.admin, 'mx-a');
});

/** Sends to `to`, claims its job and reports `reply` as the delivery's failure. */
async function refused(to: string, reply: string) {
  const sent = await env.stack.call('POST', '/api/v1/emails/send', {
    token: env.keys.sender, body: { from: 'Acme <news@acme.test>', to: [to], subject: 'Hello', text: 'Hi' },
  });
  expect(sent.status, JSON.stringify(sent.body)).toBe(201);
  const claimed = await env.stack.call('POST', '/relay/v1/outbound/claim', { token: node.token, body: { max: 10 } });
  const job = claimed.body.jobs.find((j: { email_id: string }) => j.email_id === sent.body.emails[0].id);
  const result = {
    email_id: job.email_id, attempt: job.attempt, outcome: 'failed', smtp_code: Number(reply.slice(0, 3)), reply,
    server: 'mx.dest.test:25', started_at: new Date().toISOString(), duration_ms: 50,
  };
  const reported = await env.stack.call('POST', '/relay/v1/outbound/results', { token: node.token, body: { results: [result] } });
  expect(reported.body.accepted).toEqual([job.email_id]);
  return { emailId: job.email_id as string, result };
}

const bouncesOf = async (emailId: string) =>
  (await env.stack.sql.query('SELECT type, source, source_ref, smtp_code, status, diagnostic, remote_mta, recipient FROM bounces WHERE email_id = $1', [emailId])).rows;

describe('a synchronous refusal', () => {
  test('550 5.1.1: a hard bounce record (source smtp), the row failed, the address suppressed with the email as source', async () => {
    const reply = '550 5.1.1 <gone@dest.test>: Recipient address rejected: User unknown';
    const { emailId, result } = await refused('gone@dest.test', reply);
    expect(await bouncesOf(emailId)).toEqual([{
      type: 'hard', source: 'smtp', source_ref: `${emailId}/1`, smtp_code: 550, status: '5.1.1', diagnostic: reply,
      remote_mta: 'mx.dest.test:25', recipient: 'gone@dest.test',
    }]);
    const { rows: [email] } = await env.stack.sql.query('SELECT status FROM emails WHERE id = $1', [emailId]);
    expect(email.status).toBe('failed');
    const { rows: [suppression] } = await env.stack.sql.query(`SELECT reason, detail, source_email_id FROM suppressions WHERE address = 'gone@dest.test'`);
    expect(suppression).toEqual({ reason: 'hard_bounce', detail: reply, source_email_id: emailId });
    // email.failed reports it; no second event.
    const events = (await env.stack.sql.query(`SELECT event FROM outbox WHERE data->>'id' = $1`, [emailId])).rows;
    expect(events).toEqual([{ event: 'email.failed' }]);

    // The same result again is stale: still one record.
    await env.stack.call('POST', '/relay/v1/outbound/results', { token: node.token, body: { results: [result] } });
    expect(await bouncesOf(emailId)).toHaveLength(1);
  });

  test('550 5.7.1 (a policy refusal): a soft bounce record, no suppression', async () => {
    const { emailId } = await refused('policy@dest.test', '550 5.7.1 message refused by policy');
    expect((await bouncesOf(emailId)).map((b) => [b.type, b.status])).toEqual([['soft', '5.7.1']]);
    const { rows } = await env.stack.sql.query(`SELECT 1 FROM suppressions WHERE address = 'policy@dest.test'`);
    expect(rows).toEqual([]);
  });
});
