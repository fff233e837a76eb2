import { webhooks } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { invalid, unavailable } from '../errors.js';
import type { CreateWebhookInput } from '../../contracts/webhook.js';
import { presentWebhook, webhookColumns } from './present.js';
import { newWebhookSecret } from './secret.js';
import { checkWebhookTarget } from '../../net/public-target.js';

type WebhookSettings = Pick<Config, 'database.crypto.encryption_key' | 'dns.doh_url' | 'webhook.allow_private_targets'>;

/** The same 400 a schema refusal of `url` gets (http/validation.ts). */
const urlRefused = (problem: string) => invalid(`invalid request body: url: ${problem}`, { url: problem });

/**
 * Refuses a URL whose host is, or resolves to, space it may not reach. Done
 * here rather than in the schema because it depends on settings; a resolver
 * that could not answer is 503, not a verdict on the URL.
 */
async function checkUrl(url: string, settings: WebhookSettings): Promise<void> {
  const allowPrivate = settings['webhook.allow_private_targets'];
  // Syntax first, then (for a name) its addresses: one call does both.
  const target = await checkWebhookTarget(url, { dohUrl: settings['dns.doh_url'], allowPrivate });
  if (!target.ok) throw target.transient ? unavailable(`could not check url: ${target.problem}`) : urlRefused(target.problem);
}

/**
 * Subscribes a URL to events. The signing secret is generated, stored sealed
 * and returned in this answer only.
 */
export async function createWebhook(db: Db, settings: WebhookSettings, projectId: string, input: CreateWebhookInput) {
  await checkUrl(input.url, settings);
  const { secret, sealed } = await newWebhookSecret(settings['database.crypto.encryption_key']);
  const [row] = await db.insert(webhooks)
    .values({ projectId, url: input.url, events: input.events, filters: input.filters, ordered: input.ordered ?? false, secretSealed: sealed })
    .returning(webhookColumns);
  return { webhook: { ...presentWebhook(row!), secret } };
}
