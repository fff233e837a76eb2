// The rules a send's stream brings (docs/sending.md, "Streams"), checked
// before the send's one statement: the stream must exist, broadcast mail
// always carries one-click unsubscribe, and (unless the operator switched
// `sending.broadcast_requires_dmarc` off) its from-domain must have DMARC,
// Gmail's and Yahoo's rule for bulk senders. A send on the default stream
// asks the database nothing here.
import { and, eq, inArray } from 'drizzle-orm';
import { domains } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { invalid } from '../errors.js';
import { LIST_UNSUBSCRIBE_HEADERS, type SendMessageInput, type StreamKind } from '../../contracts/send.js';
import type { Verification } from '../domains/dns-records.js';
import { domainOfAddress } from '../domains/sendable.js';
import { streamKinds, unknownStreamProblem } from './resolve.js';

export type StreamRuleSettings = Pick<Config, 'sending.broadcast_requires_dmarc'>;

const fieldProblem = (field: string, problem: string) => invalid(`invalid request body: ${field}: ${problem}`, { [field]: problem });

export const dmarcProblem = (name: string) =>
  `from domain ${name} has no DMARC record, and broadcast mail needs one (Gmail's and Yahoo's bulk sender rule): publish TXT _dmarc.${name} "v=DMARC1; p=none" and verify the domain again (POST /api/v1/domains/{id}/verify), or send on a transactional stream; the operator may switch the rule off (sending.broadcast_requires_dmarc)`;

/** The kind of each item's stream, in order; 400 naming the field of the first that breaks a rule. */
export async function checkStreamRules(
  db: Db, settings: StreamRuleSettings, projectId: string,
  items: { input: SendMessageInput; field: (name: string) => string }[],
): Promise<StreamKind[]> {
  const nameOf = (input: SendMessageInput) => input.stream ?? 'transactional';
  const kinds = await streamKinds(db, projectId, items.map((i) => nameOf(i.input)));
  const out = items.map(({ input, field }) => {
    const kind = kinds.get(nameOf(input));
    if (!kind) throw fieldProblem(field('stream'), unknownStreamProblem(nameOf(input)));
    if (kind === 'broadcast') {
      if (input.list_unsubscribe === false) throw fieldProblem(field('list_unsubscribe'), `cannot be false on stream ${nameOf(input)}: broadcast mail always carries one-click unsubscribe (RFC 8058)`);
      const custom = Object.keys(input.headers ?? {}).find((h) => LIST_UNSUBSCRIBE_HEADERS.includes(h.toLowerCase()));
      if (custom) throw fieldProblem(field(`headers.${custom}`), 'is written by the service on broadcast mail (one-click unsubscribe): drop it');
    }
    return kind;
  });
  if (settings['sending.broadcast_requires_dmarc']) {
    const broadcastDomains = [...new Set(items.filter((_, i) => out[i] === 'broadcast').map((i) => domainOfAddress(i.input.from.key)).filter((n): n is string => n !== null))];
    if (broadcastDomains.length) {
      const rows = await db.select({ name: domains.name, verification: domains.verification }).from(domains)
        .where(and(eq(domains.projectId, projectId), inArray(domains.name, broadcastDomains)));
      const dmarcOk = new Map(rows.map((r) => [r.name, (r.verification as Verification | null)?.dmarc?.ok === true]));
      for (const [i, { input, field }] of items.entries()) {
        if (out[i] !== 'broadcast') continue;
        const name = domainOfAddress(input.from.key);
        // A domain that is not the project's is refused by the send's own domain check, with its own words.
        if (name && dmarcOk.get(name) === false) throw fieldProblem(field('from'), dmarcProblem(name));
      }
    }
  }
  return out;
}
