// The Worker: the HTTP app, the Durable Objects and the scheduled jobs.
import { buildApp } from './app.js';
import { connect } from './db/client.js';
import { settingsOf } from './middleware/context.js';
import { purgeAuditEvents } from './services/audit/purge.js';
import type { Bindings } from './env.js';

export { RateLimiter } from './durable-objects/rate-limiter.js';

const app = buildApp();

export default {
  fetch: app.fetch,

  /** Cron trigger (wrangler.toml): audit retention. */
  async scheduled(_controller, env, ctx) {
    const { config } = settingsOf(env);
    const db = connect(config['database.url'], env.LOCAL_NEON_BRIDGE);
    ctx.waitUntil(
      purgeAuditEvents(db, config['audit_log_retention_days']).then((n) => {
        if (n) console.log(`audit retention: deleted ${n} events older than ${config['audit_log_retention_days']} days`);
      }),
    );
  },
} satisfies ExportedHandler<Bindings>;
