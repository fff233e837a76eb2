// The console surface (`/app/api`) is for browsers signed in with the session
// cookie. An API key or platform credential is refused outright (spec
// "Authentication" item 9: a leaked key must not reach account settings),
// and a mutating request that names a foreign Origin is refused before any
// route runs, sign-in included (a foreign page must not sign a browser in).
// Cookie requests must carry an allowed Origin: authenticate.ts checks it.
import { createMiddleware } from 'hono/factory';
import { forbidden } from '../http/errors.js';
import { checkCookieOrigin } from './cookie-origin.js';
import type { AppEnv } from '../env.js';

export const consoleGuard = () =>
  createMiddleware<AppEnv>(async (c, next) => {
    if (c.req.header('authorization') !== undefined) {
      throw forbidden('API keys and platform credentials are not accepted on /app/api: sign in with POST /app/api/session and use the session cookie');
    }
    if (c.req.header('origin') !== undefined) checkCookieOrigin(c);
    await next();
  });
