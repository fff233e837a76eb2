// A project's SSO policy, enforced (docs/console.md "SSO policy"): a project
// with `sso_required` is usable by a browser session only when that session
// was opened through one of the identity providers the policy names
// (`projects.sso_provider_ids`). A session of another provider is refused as a
// password session is: that provider may vouch for any address in its allowed
// domains, which is not what the project chose. API keys and platform
// credentials are machines, not people signing in: the policy does not apply to them.
import { sql, type SQL } from 'drizzle-orm';

export const SSO_REQUIRED = 'this project requires single sign-on: sign in through your identity provider to use it';

/** True when a session may not act in a project whose policy is `ssoRequired` and names (`ssoAccepted`) or not the session's provider. */
export const ssoBlocks = (ssoRequired: boolean, ssoAccepted: boolean): boolean => ssoRequired && !ssoAccepted;

/**
 * The same rule in SQL, for the statements that judge a session against a
 * project in the database (project switch, the event stream's session check).
 */
export const ssoAllowsSql = (project: SQL, session: SQL): SQL =>
  sql`(not ${project}.sso_required or coalesce(${session}.identity_provider_id = any(${project}.sso_provider_ids), false))`;
