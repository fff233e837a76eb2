// The cookie that ties a sign-in's callback to the browser that started it
// (pending-sign-in.ts). `SameSite=Lax`, unlike the session cookie: the
// provider sends the browser back with a cross-site top-level GET, which a
// Strict cookie would not come with. Scoped to the OIDC routes and ten
// minutes; removed by the callback.
import { getCookie } from 'hono/cookie';
import type { Context } from 'hono';
import type { Config } from '@edgemail/shared';
import { isSecureCookieSite } from '../console/sessions.js';
import { PENDING_TTL_MS } from './pending-sign-in.js';

export const BINDING_COOKIE = 'edgemail_oidc';
const PATH = '/app/api/session/oidc';

function cookie(config: Config, value: string, maxAgeSeconds: number): string {
  const attributes = [`${BINDING_COOKIE}=${value}`, `Path=${PATH}`, `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Lax'];
  if (isSecureCookieSite(config)) attributes.push('Secure');
  return attributes.join('; ');
}

export const bindingCookie = (config: Config, value: string) => cookie(config, value, PENDING_TTL_MS / 1000);
export const clearedBindingCookie = (config: Config) => cookie(config, '', 0);
export const bindingOf = (c: Context) => getCookie(c, BINDING_COOKIE);
