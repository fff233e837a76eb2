// Asking for a password reset link. The answer never says whether an account
// has the address (the route answers 202 before this runs); the link is
// mailed at most once a minute per account, so the route cannot be used to
// flood someone's mailbox.
import { sql } from 'drizzle-orm';
import { passwordResets, users } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { escapeHtml, prepareSystemMail, systemMailStatement, type SystemMail } from '../system-mail/send.js';
import { consoleLink, newMailedToken } from '../invitations/token.js';

type ResetConfig = Pick<Config, 'console.password_reset_ttl' | 'console.mail_from' | 'server.public_url' | 'database.crypto.encryption_key'>;

/** One statement: the reset row and its mail, only when `address` (bare, lower case) has an account. */
export async function requestPasswordReset(db: Db, config: ResetConfig, address: string): Promise<void> {
  const { token, hash } = await newMailedToken();
  const expiresAt = new Date(Date.now() + config['console.password_reset_ttl']);
  const mail = resetMail(consoleLink(config['server.public_url'], 'password-reset', token), expiresAt);
  const leading = sql`
    account as (select id, email from ${users} where lower(email) = ${address}),
    reset as (
      insert into ${passwordResets} (user_id, token_hash, expires_at)
      select a.id, ${hash}, ${expiresAt.toISOString()} from account a
      where not exists (select 1 from ${passwordResets} r where r.user_id = a.id and r.created_at > now() - interval '1 minute')
      returning user_id
    ),`;
  await prepareSystemMail(db, config);
  await db.execute(systemMailStatement(config, mail, sql`a.email`, sql`reset r join account a on a.id = r.user_id`, leading));
}

function resetMail(link: string, expiresAt: Date): SystemMail {
  const until = expiresAt.toISOString().replace(/\.\d+Z$/, 'Z');
  return {
    subject: 'Reset your edgemail password',
    text: [
      'Someone (we hope you) asked to reset the password of your edgemail account.',
      '', `Choose a new password: ${link}`, '',
      `The link works once, until ${until}. Setting a new password signs out every session of the account.`,
      'If you did not ask for this, ignore this mail: your password stays as it is.',
    ].join('\n'),
    html: `<p>Someone (we hope you) asked to reset the password of your edgemail account.</p>
<p><a href="${escapeHtml(link)}">Choose a new password</a></p>
<p>The link works once, until ${until}. Setting a new password signs out every session of the account.</p>
<p>If you did not ask for this, ignore this mail: your password stays as it is.</p>`,
  };
}
