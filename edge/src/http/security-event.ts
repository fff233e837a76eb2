// A request's account security event (`auth.*`), with the request's own
// address, method and path: what the sign-in routes record, refusals included.
import type { Context } from 'hono';
import { writeSecurityEvent } from '../services/audit/security-event.js';
import type { AppEnv } from '../env.js';

/** `actor`: the user, or only the email tried (id null), or nobody known. */
export function recordSecurityEvent(c: Context<AppEnv>, type: string, actor: { id: string | null; email: string } | null, status: number, detail?: string) {
  return writeSecurityEvent(c.get('db'), {
    type, actorId: actor?.id ?? null, actorEmail: actor?.email ?? '', clientIp: c.get('clientIp'), userAgent: c.req.header('user-agent') ?? null,
    method: c.req.method, path: c.req.path, status, detail,
  });
}
