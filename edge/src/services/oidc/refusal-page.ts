// Where a person's browser goes when single sign-on is refused (docs/sso.md
// "Refusals in the browser"): the callback is a navigation, so a JSON body
// would be all the person sees. The browser is sent to a console page with a
// code after `#` (never sent to a server, so never in a log), and the page
// says in its own words what went wrong. Only a code of this fixed set
// travels: nothing the provider or the request said (an `error_description`,
// a `state`) is put on the page.
import type { FinishOutcome, OidcFailure, DenialReason } from './finish-sign-in.js';

/** The codes the console's pages know (console/src/auth/sso-error.tsx). */
export type SsoErrorCode = OidcFailure | DenialReason | 'domain' | 'rate_limited';

/** The console's sign-in page. */
export const SIGN_IN_PAGE = '/sign-in';

/** True for a browser's navigation (it accepts HTML); an API client asking for JSON keeps the JSON answers. */
export const wantsPage = (accept: string | undefined) => /\btext\/html\b/i.test(accept ?? '');

/** `Location` of a refusal: the sign-in page, or for a link the page that started it (still signed in there). */
export function refusalLocation(outcome: Extract<FinishOutcome, { ok: false }> | { kind: 'rate_limited' }): string {
  if (outcome.kind === 'rate_limited') return withCode(SIGN_IN_PAGE, 'rate_limited');
  const code: SsoErrorCode = outcome.kind === 'denied' ? 'domain' : outcome.reason;
  // A link whose session has ended can only be shown to a signed-out person: the sign-in page.
  const page = outcome.linkReturnTo && code !== 'link_session' ? outcome.linkReturnTo : SIGN_IN_PAGE;
  return withCode(page, code);
}

const withCode = (path: string, code: SsoErrorCode) => `${path.split('#')[0]}#sso_error=${code}`;
