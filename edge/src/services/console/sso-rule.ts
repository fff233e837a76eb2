// A project's SSO policy, enforced (docs/console.md "SSO policy"): a project
// with `sso_required` is usable by a browser session only when that session
// was opened through single sign-on. API keys and platform credentials are
// machines, not people signing in: the policy does not apply to them.
import type { SessionMethod } from './sessions.js';

export const SSO_REQUIRED = 'this project requires single sign-on: sign in through your identity provider to use it';

/** True when a session opened by `method` may not act in a project whose policy is `ssoRequired`. */
export const ssoBlocks = (method: string, ssoRequired: boolean): boolean => ssoRequired && method !== ('oidc' satisfies SessionMethod);
