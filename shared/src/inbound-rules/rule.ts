// Routing rules for inbound mail: what a rule matches, and the one evaluation
// the edge (at ingest, and the test route) and the relay node (at RCPT and at
// DATA) both run (docs/inbound-rules.md). Rules are tried in order; the first
// that matches decides. Conditions of one rule must all hold.
import { compilePattern, patternProblem, type Matcher, type Pattern } from './pattern.js';

export const RULE_ACTIONS = ['store', 'webhooks', 'forward', 'refuse', 'drop'] as const;
export type RuleAction = (typeof RULE_ACTIONS)[number];

/** The conditions of a rule; an empty one matches every message. */
export interface RuleMatch {
  /** Any recipient of the message in the project (at RCPT: the one being given). */
  recipient?: Pattern;
  /** The envelope sender (MAIL FROM), `""` for the null sender. */
  sender?: Pattern;
  subject?: Pattern;
  /** A header by name (any case); any of its values when it occurs more than once. Absent: no match. */
  header?: { name: string; pattern: Pattern };
  /** The accepted SPF / DKIM / DMARC results (any of them). */
  spf?: string[];
  dkim?: string[];
  dmarc?: string[];
  aligned?: boolean;
  /** The spam verdict's action (rspamd: `no action`, `greylist`, `add header`, `rewrite subject`, `soft reject`, `reject`); a message without a verdict does not match. */
  spam_action?: string[];
}

export const MATCH_FIELDS = ['recipient', 'sender', 'subject', 'header', 'spf', 'dkim', 'dmarc', 'aligned', 'spam_action'] as const;

/** What is known of a message when it is judged; `undefined`: not known yet (the node at RCPT). */
export interface MessageFacts {
  recipients: string[];
  sender?: string;
  subject?: string;
  /** Lower-case names. */
  headers?: Record<string, string | string[]>;
  auth?: { spf: string; dkim: string; dmarc: string; aligned: boolean };
  /** null: the message has no spam verdict. */
  spam?: { action: string } | null;
}

export interface RuleLike { match: RuleMatch }

/** Why a rule's conditions are refused, by field (`match.recipient`), or null. */
export function matchProblems(match: RuleMatch): Record<string, string> | null {
  const problems: Record<string, string> = {};
  for (const key of ['recipient', 'sender', 'subject'] as const) {
    const p = match[key];
    if (p === undefined) continue;
    const problem = patternProblem(p);
    if (problem) problems[`match.${key}${typeof p === 'string' ? '' : '.regex'}`] = problem;
  }
  if (match.header) {
    if (!/^[!-9;-~]{1,100}$/.test(match.header.name)) problems['match.header.name'] = 'must be a header field name (printable ASCII without colon, 1 to 100 characters)';
    const problem = patternProblem(match.header.pattern);
    if (problem) problems[`match.header.pattern${typeof match.header.pattern === 'string' ? '' : '.regex'}`] = problem;
  }
  return Object.keys(problems).length ? problems : null;
}

/** Whether a rule can be decided from the recipient alone (so at RCPT). */
export const needsOnlyRecipient = (match: RuleMatch): boolean =>
  Object.keys(match).every((k) => k === 'recipient');

type Tri = true | false | undefined;
const and = (values: Tri[]): Tri => (values.includes(false) ? false : values.includes(undefined) ? undefined : true);

export interface CompiledRule<R extends RuleLike = RuleLike> {
  rule: R;
  test(facts: MessageFacts): Tri;
}

const optional = (p: Pattern | undefined): Matcher | null => (p === undefined ? null : compilePattern(p));
const oneOf = (list: string[] | undefined) => (list ? new Set(list.map((s) => s.toLowerCase())) : null);

/** Compiles a rule once; its `test` is three-valued: undefined when a fact it needs is not known. */
export function compileRule<R extends RuleLike>(rule: R): CompiledRule<R> {
  const m = rule.match;
  const recipient = optional(m.recipient);
  const sender = optional(m.sender);
  const subject = optional(m.subject);
  const header = m.header ? { name: m.header.name.toLowerCase(), test: compilePattern(m.header.pattern) } : null;
  const spf = oneOf(m.spf);
  const dkim = oneOf(m.dkim);
  const dmarc = oneOf(m.dmarc);
  const spam = oneOf(m.spam_action);
  return {
    rule,
    test(f) {
      const checks: Tri[] = [];
      if (recipient) checks.push(f.recipients.some((r) => recipient(r)));
      if (sender) checks.push(f.sender === undefined ? undefined : sender(f.sender));
      if (subject) checks.push(f.subject === undefined ? undefined : subject(f.subject));
      if (header) {
        if (!f.headers) checks.push(undefined);
        else {
          const v = f.headers[header.name];
          checks.push(v === undefined ? false : (Array.isArray(v) ? v : [v]).some((x) => header.test(x)));
        }
      }
      if (spf) checks.push(f.auth ? spf.has(f.auth.spf.toLowerCase()) : undefined);
      if (dkim) checks.push(f.auth ? dkim.has(f.auth.dkim.toLowerCase()) : undefined);
      if (dmarc) checks.push(f.auth ? dmarc.has(f.auth.dmarc.toLowerCase()) : undefined);
      if (m.aligned !== undefined) checks.push(f.auth ? f.auth.aligned === m.aligned : undefined);
      if (spam) checks.push(f.spam === undefined ? undefined : f.spam !== null && spam.has(f.spam.action.toLowerCase()));
      return and(checks);
    },
  };
}

/**
 * The first rule that matches, in order. `decided: false` when a rule before
 * any match needs a fact not known yet: the answer must wait for it (the node
 * at RCPT defers to DATA, at DATA to the edge). `rule: null`: none matched.
 */
export function firstMatch<R extends RuleLike>(rules: CompiledRule<R>[], facts: MessageFacts): { decided: true; rule: R | null } | { decided: false; waitingOn: R } {
  for (const c of rules) {
    const v = c.test(facts);
    if (v === false) continue;
    if (v === undefined) return { decided: false, waitingOn: c.rule };
    return { decided: true, rule: c.rule };
  }
  return { decided: true, rule: null };
}
