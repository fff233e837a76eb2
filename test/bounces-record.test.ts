// recordBounces (edge/src/services/delivery/bounces/record.ts) against the real
// database: every bounce source (DSN, ARF, SES, simulator) records through it,
// so what one call writes, and what a repeat does not, is shown here once.
import { describe, expect, test } from 'vitest';
import { recordBounces } from '../edge/src/services/delivery/bounces/record.js';
import type { BounceReport } from '../edge/src/services/delivery/bounces/report.js';
import type { Db } from '../edge/src/db/client.js';
import { useTenantStack } from './support/tenant-stack.js';

const env = useTenantStack();
// The service runs on neon-http in the Worker; `execute` answers `{rows}` on node-postgres too.
const db = () => env.stack.db as unknown as Db;

/** An outbound message with one `emails` row per recipient, written directly (sending is not under test). */
async function sentEmail(projectId: string, recipient: string, status = 'sent'): Promise<string> {
  const { rows: [message] } = await env.stack.sql.query(
    `INSERT INTO outbound_messages (project_id, message_id, "from", "to", subject) VALUES ($1, $2, 'Acme <news@acme.test>', $3, 'Hello') RETURNING id`,
    [projectId, `<${crypto.randomUUID()}@acme.test>`, [recipient]]);
  const { rows: [email] } = await env.stack.sql.query(
    `INSERT INTO emails (project_id, message_id, recipient, kind, status, attempts) VALUES ($1, $2, $3, 'to', $4, 1) RETURNING id`,
    [projectId, message.id, recipient, status]);
  return email.id;
}

const report = (emailId: string, over: Partial<BounceReport> = {}): BounceReport => ({
  emailId, type: 'hard', source: 'dsn', sourceRef: crypto.randomUUID(), smtpCode: 550, status: '5.1.1',
  diagnostic: 'smtp; 550 5.1.1 <x@dest.test>: user unknown', remoteMta: 'dns; mx.dest.test', feedbackType: null,
  originalMessageId: '<m@acme.test>', ...over,
});

const state = async (emailId: string) => {
  const { rows: [email] } = await env.stack.sql.query('SELECT status, error_message FROM emails WHERE id = $1', [emailId]);
  const bounces = (await env.stack.sql.query('SELECT type, source, source_ref, status FROM bounces WHERE email_id = $1 ORDER BY created_at', [emailId])).rows;
  const events = (await env.stack.sql.query(`SELECT event, data FROM outbox WHERE data->>'id' = $1 ORDER BY id`, [emailId])).rows;
  return { email, bounces, events };
};
const suppression = async (projectId: string, address: string) =>
  (await env.stack.sql.query('SELECT reason, detail, source_email_id FROM suppressions WHERE project_id = $1 AND address = $2', [projectId, address])).rows[0];
const address = () => `u${crypto.randomUUID().slice(0, 8)}@dest.test`;

describe('recordBounces', () => {
  test('a hard bounce: a bounce row, the email bounced, the address suppressed, one email.bounced event; a repeat changes nothing', async () => {
    const to = address();
    const emailId = await sentEmail(env.tenant.project.id, to);
    const hard = report(emailId);
    const first = await recordBounces(db(), [hard]);
    expect(first.recorded).toEqual([{ id: expect.any(String), emailId, type: 'hard' }]);

    const after = await state(emailId);
    expect(after.email).toEqual({ status: 'bounced', error_message: hard.diagnostic });
    expect(after.bounces).toEqual([{ type: 'hard', source: 'dsn', source_ref: hard.sourceRef, status: '5.1.1' }]);
    expect(after.events).toEqual([{
      event: 'email.bounced',
      data: {
        id: emailId, project_id: env.tenant.project.id, sender: 'news@acme.test', recipients: [to], subject: 'Hello',
        status: 'bounced', attempts: 1, error_message: hard.diagnostic, stream: 'transactional',
        bounce: {
          id: first.recorded[0]!.id, type: 'hard', source: 'dsn', smtp_code: 550, status: '5.1.1', diagnostic: hard.diagnostic,
          remote_mta: 'dns; mx.dest.test', feedback_type: null, original_message_id: '<m@acme.test>', created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        },
      },
    }]);
    expect(await suppression(env.tenant.project.id, to)).toEqual({ reason: 'hard_bounce', detail: hard.diagnostic, source_email_id: emailId });

    // The same report again (a node forwarding twice): nothing more.
    const again = await recordBounces(db(), [hard, hard]);
    expect(again.recorded).toEqual([]);
    expect(await state(emailId)).toEqual(after);
  });

  test('a complaint: complained, suppressed as complaint with its feedback type, email.complained', async () => {
    const to = address();
    const emailId = await sentEmail(env.tenant.project.id, to);
    await recordBounces(db(), [report(emailId, { type: 'complaint', source: 'arf', smtpCode: null, status: null, diagnostic: null, remoteMta: null, feedbackType: 'abuse' })]);
    const after = await state(emailId);
    expect(after.email).toEqual({ status: 'complained', error_message: null });
    expect(after.events.map((e) => [e.event, e.data.status, e.data.bounce.type, e.data.bounce.feedback_type, 'error_message' in e.data]))
      .toEqual([['email.complained', 'complained', 'complaint', 'abuse', false]]);
    expect(await suppression(env.tenant.project.id, to)).toEqual({ reason: 'complaint', detail: 'abuse', source_email_id: emailId });
  });

  test('a soft bounce is recorded only: the email stays sent, no suppression, no event', async () => {
    const to = address();
    const emailId = await sentEmail(env.tenant.project.id, to);
    const { recorded } = await recordBounces(db(), [report(emailId, { type: 'soft', smtpCode: 452, status: '4.2.2', diagnostic: 'mailbox full' })]);
    expect(recorded).toHaveLength(1);
    const after = await state(emailId);
    expect(after.email.status).toBe('sent');
    expect(after.bounces.map((b) => b.type)).toEqual(['soft']);
    expect(after.events).toEqual([]);
    expect(await suppression(env.tenant.project.id, to)).toBeUndefined();
  });

  test('an existing suppression is kept; an expired one is replaced', async () => {
    const kept = address();
    const expired = address();
    await env.stack.sql.query(`INSERT INTO suppressions (project_id, address, reason, detail) VALUES ($1, $2, 'manual', 'asked'), ($1, $3, 'manual', 'old')`, [env.tenant.project.id, kept, expired]);
    await env.stack.sql.query(`UPDATE suppressions SET expires_at = now() - interval '1 minute' WHERE project_id = $1 AND address = $2`, [env.tenant.project.id, expired]);
    const a = await sentEmail(env.tenant.project.id, kept);
    const b = await sentEmail(env.tenant.project.id, expired);
    await recordBounces(db(), [report(a), report(b)]);
    expect(await suppression(env.tenant.project.id, kept)).toEqual({ reason: 'manual', detail: 'asked', source_email_id: null });
    expect(await suppression(env.tenant.project.id, expired)).toMatchObject({ reason: 'hard_bounce', source_email_id: b });
  });

  test('a row not sent (failed, captured) keeps its status; smtp-source bounces write no event; an unknown email is ignored', async () => {
    const failedId = await sentEmail(env.tenant.project.id, address(), 'failed');
    const capturedId = await sentEmail(env.tenant.project.id, address(), 'captured');
    const result = await recordBounces(db(), [
      report(failedId, { source: 'smtp', sourceRef: null }),
      report(capturedId),
      report(crypto.randomUUID()),
    ]);
    expect(result.recorded.map((r) => r.emailId).sort()).toEqual([failedId, capturedId].sort());
    expect((await state(failedId)).email.status).toBe('failed');
    expect((await state(failedId)).events).toEqual([]);
    expect((await state(capturedId)).email.status).toBe('captured');
  });

  test('one project\'s report never touches another project\'s rows', async () => {
    const to = address();
    const mine = await sentEmail(env.tenant.project.id, to);
    const theirs = await sentEmail(env.other.project.id, to);
    await recordBounces(db(), [report(mine)]);
    expect((await state(theirs)).email.status).toBe('sent');
    expect(await suppression(env.other.project.id, to)).toBeUndefined();
    // Bounce rows take the project of the email they are about.
    const { rows } = await env.stack.sql.query('SELECT project_id FROM bounces WHERE email_id = $1', [mine]);
    expect(rows).toEqual([{ project_id: env.tenant.project.id }]);
  });
});
