// Routing rules for inbound mail (docs/inbound-rules.md). The conditions and
// their pattern dialects are shared with the relay node (shared/src/inbound-rules).
import { z } from '@hono/zod-openapi';
import { AUTH_VERDICTS, matchProblems, PATTERN_MAX_LENGTH } from '@edgemail/shared';
import { Timestamp, Uuid } from './common.js';

export const INBOUND_RULES_MAX = 100;
export const RULE_WEBHOOKS_MAX = 20;
export const REFUSE_TEXT_MAX = 200;
export const DEFAULT_REFUSE_TEXT = 'Message refused by the recipient\'s rules';
/** The actions the API takes (shared RULE_ACTIONS). */
export const API_RULE_ACTIONS = ['store', 'webhooks', 'forward', 'refuse', 'drop'] as const;
/** A forward target: one bare address (`local@domain`), no display name, no list. */
export const FORWARD_TO_PATTERN = /^[^\s<>()[\]\\,;:@"]{1,64}@(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

const PatternSchema = z.union([
  z.string().max(PATTERN_MAX_LENGTH, `must be at most ${PATTERN_MAX_LENGTH} characters`).min(1, 'must not be empty'),
  z.object({ regex: z.string() }).strict(),
]).openapi('InboundRulePattern', {
  description: `A glob (\`*\` is any run of characters, everything else literal, case-insensitive, the whole value: \`ann@acme.test\`, \`*@acme.test\`, \`support+*@acme.test\`, \`*invoice*\`) or \`{"regex": "..."}\` in the bounded dialect of docs/inbound-rules.md (no back references or lookaround, no quantified group holding a quantifier or |, at most 3 variable quantifiers, at most ${PATTERN_MAX_LENGTH} characters, matched case-insensitively on the value's first 256 characters).`,
  example: '*@acme.test',
});

const Verdicts = z.array(z.enum(AUTH_VERDICTS)).min(1).max(AUTH_VERDICTS.length);

export const InboundRuleMatchSchema = z.object({
  recipient: PatternSchema.optional(),
  sender: PatternSchema.optional(),
  subject: PatternSchema.optional(),
  header: z.object({ name: z.string(), pattern: PatternSchema }).strict().optional(),
  spf: Verdicts.optional(),
  dkim: Verdicts.optional(),
  dmarc: Verdicts.optional(),
  aligned: z.boolean().optional(),
  spam_action: z.array(z.string().min(1).max(40)).min(1).max(10).optional(),
}).strict().superRefine((match, ctx) => {
  for (const [path, message] of Object.entries(matchProblems(match) ?? {})) {
    ctx.addIssue({ code: 'custom', path: path.split('.').slice(1), message });
  }
}).openapi('InboundRuleMatch', {
  description: 'Every condition given must hold; none given matches every message. `recipient`: any recipient of the message in this project; `sender`: the envelope sender; `header`: a header by name (any case), any of its values; `spf`/`dkim`/`dmarc`: the accepted results; `aligned`; `spam_action`: the spam verdict\'s action (a message without one does not match).',
  example: { recipient: 'support+*@acme.test' },
});

const RefuseText = z.string().min(1).max(REFUSE_TEXT_MAX, `must be at most ${REFUSE_TEXT_MAX} characters`)
  .regex(/^[ -~]+$/, 'must be printable ASCII on one line')
  .openapi({ description: `refuse: the text of the \`550 5.7.1\` reply, printable ASCII, at most ${REFUSE_TEXT_MAX} characters (default "${DEFAULT_REFUSE_TEXT}")`, example: 'This address no longer takes mail' });

const fields = {
  name: z.string().max(200, 'must be at most 200 characters').openapi({ example: 'support desk' }),
  position: z.number().int('must be an integer').min(1, 'must be at least 1').openapi({ description: 'Where the rule stands, 1 first; past the end: last. Others move to make room.', example: 1 }),
  match: InboundRuleMatchSchema,
  action: z.enum(API_RULE_ACTIONS).openapi({ description: '`store` (the default for mail no rule matches), `webhooks` (store; `inbound.received` only to `webhook_ids`), `forward` (store, and send a copy to `forward_to` through the project\'s sending path: From the address it was received at, Reply-To the original sender, SRS envelope sender, at most 3 hops; docs/inbound-rules.md), `refuse` (550 at SMTP time with `refuse_text`), `drop` (accepted, not stored, counted in `matched_count`)', example: 'webhooks' }),
  refuse_text: RefuseText,
  webhook_ids: z.array(Uuid).min(1, 'must name at least one webhook').max(RULE_WEBHOOKS_MAX),
  forward_to: z.string().max(320, 'must be at most 320 characters').regex(FORWARD_TO_PATTERN, 'must be one address (local@domain), without a name or a list')
    .openapi({ description: 'forward: the one address a copy is sent to (bare `local@domain`); not at a domain of this project', example: 'desk@partner.example' }),
};

export const CreateInboundRuleSchema = z.object({
  name: fields.name.optional(),
  position: fields.position.optional(),
  match: fields.match.optional(),
  action: fields.action,
  refuse_text: fields.refuse_text.optional(),
  webhook_ids: fields.webhook_ids.optional(),
  forward_to: fields.forward_to.optional(),
}).strict().openapi('CreateInboundRule');
export type CreateInboundRuleInput = z.infer<typeof CreateInboundRuleSchema>;

export const UpdateInboundRuleSchema = z.object({
  name: fields.name.optional(),
  position: fields.position.optional(),
  match: fields.match.optional(),
  action: fields.action.optional(),
  refuse_text: fields.refuse_text.nullable().optional(),
  webhook_ids: fields.webhook_ids.nullable().optional(),
  forward_to: fields.forward_to.nullable().optional(),
}).strict().openapi('UpdateInboundRule');
export type UpdateInboundRuleInput = z.infer<typeof UpdateInboundRuleSchema>;

export const InboundRuleSchema = z.object({
  id: z.string().openapi({ format: 'uuid' }),
  position: z.number().int(),
  name: z.string(),
  match: InboundRuleMatchSchema,
  action: z.enum(API_RULE_ACTIONS),
  refuse_text: z.string().nullable(),
  webhook_ids: z.array(z.string()).nullable(),
  forward_to: z.string().nullable().openapi({ description: 'forward: the address copies go to; null for other actions' }),
  matched_count: z.number().int().openapi({ description: 'Messages this rule decided at ingest (a drop is counted here). Refusals the relay node made at SMTP time are not: the message never reached the edge.' }),
  last_matched_at: Timestamp.nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
}).openapi('InboundRule');
export type InboundRuleRecord = z.infer<typeof InboundRuleSchema>;

/** Longest raw message the rule test route reads. */
export const MAX_TEST_RAW_CHARS = 262_144;

export const TestInboundRulesSchema = z.object({
  inbound_email_id: Uuid.optional().openapi({ description: 'A stored message of this project' }),
  message: z.object({
    recipients: z.array(z.string().max(320)).min(1).max(100),
    sender: z.string().max(320).optional(),
    subject: z.string().max(998).optional(),
    headers: z.record(z.string(), z.union([z.string(), z.array(z.string())])).optional(),
    auth: z.object({ spf: z.string(), dkim: z.string(), dmarc: z.string(), aligned: z.boolean() }).strict().optional(),
    spam: z.object({ action: z.string() }).strict().nullable().optional(),
    raw: z.string().max(MAX_TEST_RAW_CHARS, `must be at most ${MAX_TEST_RAW_CHARS} characters`).optional().openapi({
      description: `The message as sent (RFC 5322, at most ${MAX_TEST_RAW_CHARS} characters): its subject and headers are read from it, as ingest reads them, instead of \`subject\` and \`headers\` (give one or the other). The envelope (\`recipients\`, \`sender\`) and the verdicts are not in a message's text and are still given here.`,
      example: 'From: Ann <ann@example.org>\r\nSubject: Hello\r\n\r\nHi\r\n',
    }),
  }).strict().optional().openapi({ description: 'A message described by its facts, or given raw with its envelope, instead (what is not given counts as empty: no headers, no verdicts)' }),
}).strict().openapi('TestInboundRules');
export type TestInboundRulesInput = z.infer<typeof TestInboundRulesSchema>;

export const InboundRulesTestAnswerSchema = z.object({
  rule: InboundRuleSchema.nullable().openapi({ description: 'The first rule that matched, or null' }),
  action: z.enum(API_RULE_ACTIONS),
  would: z.string().openapi({ example: 'store the message and deliver inbound.received to webhooks 4b5c…' }),
}).openapi('InboundRulesTestAnswer');
