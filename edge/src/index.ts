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
  fetch: app.fetch,

  /**
   * Cron triggers (wrangler.toml): every minute the webhook sweep, domain
   * re-verification and the inbound storage count; hourly audit retention, expired idempotency keys, old outbox rows,
   * renewal of the certificates issued here (services/certificates/renew.ts) and
   * delivery records past `delivery_records_retention_days`.
   */
  async scheduled(controller, env, ctx) {
    // With the installation overrides: the retention periods can be changed at run time.
    const { config } = await effectiveSettings(env);
    const db = connect(config['database.url'], env.LOCAL_NEON_BRIDGE);
    if (controller.cron !== CRON.auditRetention) {
      ctx.waitUntil(sweepWebhooks(db, env).then((r) => {
        if (r.handedOver || r.streamed || r.woken) console.log(`webhook sweep: handed over ${r.handedOver} outbox rows (and ${r.streamed} more to the event stream only), woke ${r.woken} dispatchers`);
      }));
      ctx.waitUntil(countInboundUsage(db, config['inbound.storage_quota_bytes']).then((r) => {
        if (r.full) console.log(`inbound storage: ${r.full} of ${r.projects} projects at their quota (RCPT answered 452 4.2.2)`);
      }));
      // A crossing's webhook event is handed over by the next sweep (outbox rows left pending are its work).
      ctx.waitUntil(evaluateComplaintThreshold(db, config).then((events) => {
        if (events.size) console.log(`sender health: ${events.size} projects crossed the complaint threshold`);
      }, (e) => console.error(`sender health: the complaint threshold was not checked: ${e instanceof Error ? e.message : String(e)}`)));
      ctx.waitUntil(reverifyDomains(db, config, REVERIFY_PER_RUN).then((r) => {
        if (r.failed || r.errors.length) console.warn(`domain re-verification: ${r.checked} checked, ${r.failed} failed, ${r.errors.length} not checked (resolver: ${r.errors.map((e) => e.problem).join('; ')})`);
      }));
      return;
    }
    ctx.waitUntil(
      purgeAuditEvents(db, config['audit_log_retention_days']).then((n) => {
        if (n) console.log(`audit retention: deleted ${n} events older than ${config['audit_log_retention_days']} days`);
      }),
    );
    ctx.waitUntil(purgeIdempotencyKeys(db).then((n) => {
      if (n) console.log(`idempotency keys: deleted ${n} older than 24 hours`);
    }));
    ctx.waitUntil(purgeOutbox(db).then((n) => {
      if (n) console.log(`outbox: deleted ${n} handed-over rows older than 7 days`);
    }));
    ctx.waitUntil(renewIssuedCertificates(db, config['database.crypto.encryption_key']).then((r) => {
      if (r.renewed.length) console.log(`certificates: renewed ${r.renewed.join(', ')}`);
      for (const s of r.skipped) console.warn(`certificates: not renewing "${s.name}": ${s.reason}`);
    }));
    const retentionDays = config['delivery_records_retention_days'];
    ctx.waitUntil(purgeDeliveryRecords(db, retentionDays).then((n) => {
      if (n.webhookDeliveries || n.emailAttempts) {
        console.log(`delivery records older than ${retentionDays} days: deleted ${n.webhookDeliveries} webhook deliveries (${n.webhookAttempts} attempts), ${n.emailAttempts} email attempts`);
      }
    }));
  },
} satisfies ExportedHandler<Bindings>;
