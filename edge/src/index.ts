// The Worker: the HTTP app, the Durable Objects and the scheduled jobs.
import { buildApp } from './app.js';
import { connect } from './db/client.js';
import { effectiveSettings } from './services/settings/overrides.js';
import { purgeAuditEvents } from './services/audit/purge.js';
import { evaluateComplaintThreshold } from './services/sender-health/evaluate.js';
import { purgeOutbox, sweepWebhooks } from './services/webhook-outbox/sweep.js';
import { reverifyDomains } from './services/domains/reverify.js';
import { countInboundUsage } from './services/inbound-emails/usage-count.js';
import { purgeIdempotencyKeys } from './services/idempotency/purge.js';
import { purgeDeliveryRecords } from './services/delivery-records/purge.js';
import { renewIssuedCertificates } from './services/certificates/renew.js';
import type { Bindings } from './env.js';
import { LOCAL_SCHEDULED_HEADER, LOCAL_SCHEDULED_PATH } from './local-scheduled.js';

export { RateLimiter } from './durable-objects/rate-limiter.js';
export { ApiKeyGate } from './durable-objects/api-key-gate.js';
export { WebhookDispatcher } from './durable-objects/webhook-dispatcher.js';
export { EventStream } from './durable-objects/event-stream.js';

const app = buildApp();

/** Domains re-checked per minute: about 7,000 per six-hour round. */
const REVERIFY_PER_RUN = 20;

/** The cron expressions of wrangler.toml's `[triggers]`. */
const CRON = { webhookSweep: '* * * * *', auditRetention: '17 * * * *' } as const;

export default {
  fetch(request, env, ctx) {
    const local = localScheduledTrigger(request, env);
    return local ? local : app.fetch(request, env, ctx);
  },

  /**
   * Cron triggers (wrangler.toml): every minute the webhook sweep, domain
   * re-verification and the inbound storage count; hourly audit retention, expired idempotency keys, old outbox rows,
   * renewal of the certificates issued here (services/certificates/renew.ts) and
   * delivery records past `delivery_records_retention_days`.
   */
  async scheduled(controller, env, ctx) {
    for (const job of await scheduledJobs(controller.cron, env)) ctx.waitUntil(job);
  },
} satisfies ExportedHandler<Bindings>;

/** The jobs of one cron run, each already started (the scheduled handler hands them to waitUntil). */
async function scheduledJobs(cron: string, env: Bindings): Promise<Promise<unknown>[]> {
    const jobs: Promise<unknown>[] = [];
    // With the installation overrides: the retention periods can be changed at run time.
    const { config } = await effectiveSettings(env);
    const db = connect(config['database.url'], env.LOCAL_NEON_BRIDGE);
    if (cron !== CRON.auditRetention) {
      jobs.push(sweepWebhooks(db, env).then((r) => {
        if (r.handedOver || r.streamed || r.woken) console.log(`webhook sweep: handed over ${r.handedOver} outbox rows (and ${r.streamed} more to the event stream only), woke ${r.woken} dispatchers`);
      }));
      jobs.push(countInboundUsage(db, config['inbound.storage_quota_bytes']).then((r) => {
        if (r.full) console.log(`inbound storage: ${r.full} of ${r.projects} projects at their quota (RCPT answered 452 4.2.2)`);
      }));
      // A crossing's webhook event is handed over by the next sweep (outbox rows left pending are its work).
      jobs.push(evaluateComplaintThreshold(db, config).then((events) => {
        if (events.size) console.log(`sender health: ${events.size} projects crossed the complaint threshold`);
      }, (e) => console.error(`sender health: the complaint threshold was not checked: ${e instanceof Error ? e.message : String(e)}`)));
      jobs.push(reverifyDomains(db, config, REVERIFY_PER_RUN).then((r) => {
        if (r.failed || r.errors.length) console.warn(`domain re-verification: ${r.checked} checked, ${r.failed} failed, ${r.errors.length} not checked (resolver: ${r.errors.map((e) => e.problem).join('; ')})`);
      }));
      return jobs;
    }
    jobs.push(
      purgeAuditEvents(db, config['audit_log_retention_days']).then((n) => {
        if (n) console.log(`audit retention: deleted ${n} events older than ${config['audit_log_retention_days']} days`);
      }),
    );
    jobs.push(purgeIdempotencyKeys(db).then((n) => {
      if (n) console.log(`idempotency keys: deleted ${n} older than 24 hours`);
    }));
    jobs.push(purgeOutbox(db).then((n) => {
      if (n) console.log(`outbox: deleted ${n} handed-over rows older than 7 days`);
    }));
    jobs.push(renewIssuedCertificates(db, config['database.crypto.encryption_key']).then((r) => {
      if (r.renewed.length) console.log(`certificates: renewed ${r.renewed.join(', ')}`);
      for (const s of r.skipped) console.warn(`certificates: not renewing "${s.name}": ${s.reason}`);
    }));
    const retentionDays = config['delivery_records_retention_days'];
    jobs.push(purgeDeliveryRecords(db, retentionDays).then((n) => {
      if (n.webhookDeliveries || n.emailAttempts) {
        console.log(`delivery records older than ${retentionDays} days: deleted ${n.webhookDeliveries} webhook deliveries (${n.webhookAttempts} attempts), ${n.emailAttempts} email attempts`);
      }
    }));
    return jobs;
}

/**
 * The local stack's way to run a cron (edge/local/cron.ts, tests): Miniflare's
 * `/cdn-cgi/handler/scheduled` cannot reach a Worker that serves static assets
 * (the assets router in front fails to pass the ScheduledController on), so
 * the local stack sets LOCAL_SCHEDULED_SECRET, a secret of each start, and
 * POSTs `/__edgemail/scheduled?cron=…` with it. Answers once every job has
 * settled: 200, or 500 when one failed (as Miniflare's endpoint did). Never
 * served without the binding, so never in production.
 */
function localScheduledTrigger(request: Request, env: Bindings): Promise<Response> | undefined {
  const secret = env.LOCAL_SCHEDULED_SECRET;
  if (!secret) return undefined;
  const url = new URL(request.url);
  if (url.pathname !== LOCAL_SCHEDULED_PATH) return undefined;
  return (async () => {
    const given = new TextEncoder().encode(request.headers.get(LOCAL_SCHEDULED_HEADER) ?? '');
    const expected = new TextEncoder().encode(secret);
    if (request.method !== 'POST' || given.byteLength !== expected.byteLength || !crypto.subtle.timingSafeEqual(given, expected)) {
      return Response.json({ error: 'not found' }, { status: 404 });
    }
    const results = await Promise.allSettled(await scheduledJobs(url.searchParams.get('cron') ?? CRON.webhookSweep, env));
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    for (const f of failed) console.error(`scheduled job failed: ${f.reason instanceof Error ? f.reason.message : String(f.reason)}`);
    return new Response(failed.length ? 'exception' : 'ok', { status: failed.length ? 500 : 200 });
  })();
}

