// The one redirect URI the operator registers at every identity provider
// (docs/sso.md "Identity providers"): derived from `server.public_url`, never
// stored, so moving the service changes it in one place.
import type { Config } from '@edgemail/shared';

/** The console's OIDC callback route, under `server.public_url`. */
export const OIDC_CALLBACK_PATH = '/app/api/session/oidc/callback';

/** `${server.public_url}/app/api/session/oidc/callback` (a trailing slash of the setting is dropped). */
export const redirectUriOf = (config: Config): string =>
  `${config['server.public_url'].replace(/\/+$/, '')}${OIDC_CALLBACK_PATH}`;
