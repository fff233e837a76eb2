// What went wrong in single sign-on, on the page the callback sent the browser
// to (`#sso_error=<code>`, docs/sso.md "Refusals in the browser"). The code is
// read once and taken out of the address bar (a reload does not show it
// again); only codes of this table are shown in their words, anything else
// as a plain "failed", so nothing a link carries is ever put on the page.
import { useState } from 'preact/hooks';
import { FormError } from '../ui';

const UNVERIFIED = 'the identity provider\'s answer could not be verified. Try again; if it keeps failing, tell your administrator (code: ';
const MESSAGES: Record<string, string> = {
  state: 'That sign-in had expired, was used already, or was started in another browser. Start it again from here.',
  provider: 'The identity provider was removed or disabled during the sign-in.',
  provider_error: 'The identity provider did not sign you in. Try again, or sign in another way.',
  email_missing: 'The identity provider gave no email address for your account, so it cannot sign you in here.',
  email_unverified: 'The identity provider has not verified your email address. Verify it there, then try again.',
  domain: 'Your email address\'s domain may not sign in through this identity provider.',
  link_required: 'An account with this email address already exists. Sign in to it another way, then link the identity provider from your account settings.',
  identity_taken: 'That identity is already linked to another account.',
  link_session: 'The session that started linking the identity provider has ended. Sign in and link it again.',
  rate_limited: 'Too many single sign-on attempts from your address. Wait a minute and try again.',
};
for (const code of ['discovery', 'token', 'id_token', 'iss', 'aud', 'azp', 'nonce', 'exp', 'iat', 'signature']) {
  MESSAGES[code] = `Single sign-on failed: ${UNVERIFIED}${code}).`;
}

/** The message for `#sso_error=…` of the page's address, read once; undefined without one. */
export function useSsoError(): string | undefined {
  const [message] = useState(() => {
    const code = new URLSearchParams(location.hash.slice(1)).get('sso_error');
    if (code === null) return undefined;
    history.replaceState(history.state, '', location.pathname + location.search);
    return Object.hasOwn(MESSAGES, code) ? MESSAGES[code] : 'Single sign-on failed. Try again, or sign in another way.';
  });
  return message;
}

/** The message, as a form error (role=alert), where the page shows its errors. */
export function SsoError() {
  return <FormError message={useSsoError()} />;
}
