// The two typed clients the pages call, from the committed generated types
// (console/scripts/generate-api-types.ts): `app` for /app/api (session,
// account, sign-in ceremonies), `api` for /api/v1 (the project's resources).
// Same origin, so the session cookie rides along and the browser sends the
// Origin the Worker checks on every mutation; no token is ever held here.
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths as AppPaths, components as AppComponents } from './generated/app';
import type { paths as ApiPaths, components as ApiComponents } from './generated/api';

export type AppSchemas = AppComponents['schemas'];
export type ApiSchemas = ApiComponents['schemas'];

const origin = typeof location === 'undefined' ? 'http://localhost' : location.origin;

/** Called when a call answers 401 (the session ended): the shell goes back to sign-in. */
let onSignedOut: (() => void) | undefined;
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

const signedOutWatch: Middleware = {
  onResponse({ response, request }) {
    // The sign-in calls answer 401 for a wrong password: that is theirs to show, not a signed-out session.
    const path = new URL(request.url).pathname;
    if (response.status === 401 && !path.startsWith('/app/api/session') && !path.startsWith('/app/api/password-reset') && !path.startsWith('/app/api/invitations')) onSignedOut?.();
    else if (response.status === 401 && path === '/app/api/session' && request.method === 'GET') onSignedOut?.();
    return undefined;
  },
};

export const app = createClient<AppPaths>({ baseUrl: origin });
export const api = createClient<ApiPaths>({ baseUrl: origin });
app.use(signedOutWatch);
api.use(signedOutWatch);
