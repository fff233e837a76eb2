// The headers of one-click unsubscribe (RFC 2369, RFC 8058) for one claimed
// recipient: written into the job's custom headers, which the relay node
// composes and DKIM-signs (every custom header is in `h=`), so both are
// covered by the signature, as Gmail and Yahoo require.
import type { Config } from '@edgemail/shared';
import { bounceDomain } from '../delivery/bounces/verp.js';
import { httpsToken, mailtoLocalPart } from './token.js';

export interface UnsubscribeRow { id: string; project_id: string; recipient: string; stream: string; date: string }

/**
 * `List-Unsubscribe: <https://<host>/unsubscribe/<token>>, <mailto:unsub-…@bounces.<host>?subject=unsubscribe>`
 * (the `mailto:` only where there is a bounce domain) and
 * `List-Unsubscribe-Post: List-Unsubscribe=One-Click`.
 */
export async function listUnsubscribeHeaders(settings: Pick<Config, 'server.public_url' | 'database.crypto.encryption_key'>, row: UnsubscribeRow): Promise<Record<string, string>> {
  const facts = { projectId: row.project_id, stream: row.stream, address: row.recipient, emailId: row.id };
  const issuedAt = Math.floor(Date.now() / 1000);
  const origin = new URL(settings['server.public_url']).origin;
  const links = [`<${origin}/unsubscribe/${await httpsToken(settings, facts, issuedAt)}>`];
  const domain = bounceDomain(settings);
  if (domain) links.push(`<mailto:${await mailtoLocalPart(settings, facts, Math.floor(Date.parse(row.date) / 1000))}@${domain}?subject=unsubscribe>`);
  return { 'List-Unsubscribe': links.join(', '), 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' };
}
