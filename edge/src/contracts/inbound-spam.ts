import { z } from '@hono/zod-openapi';

const threshold = (what: string) => z.number({ error: 'must be a number or null' }).finite().min(-1000, 'must be at least -1000').max(1000, 'must be at most 1000').nullable()
  .openapi({ description: what, example: 10 });

export const InboundSpamSettingsSchema = z.object({
  reject_score: threshold('rspamd score at or above which mail for the project is refused at DATA with `550 5.7.1` (its record is kept, status `rejected`); null: never refused for its score. A message for several projects is refused only when it reaches every one\'s `reject_score`.'),
  mark_score: threshold('rspamd score at or above which the record and `inbound.received` carry `spam.marked: true`; null: only `reject_score` marks. At most `reject_score`.'),
}).openapi('InboundSpamSettings');

export const PutInboundSpamSettingsSchema = InboundSpamSettingsSchema.strict().openapi('PutInboundSpamSettings');
