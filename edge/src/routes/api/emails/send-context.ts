// What both send routes hand the send service: the request's project, the
// caller's sandbox mode, and its Idempotency-Key with the body's hash.
import type { Context } from 'hono';
import { sendBodyLimitBytes, type Config } from '@edgemail/shared';
import type { ProjectEnv } from '../../../http/define-route.js';
import { requestHash } from '../../../services/idempotency/keys.js';
import type { SendContext } from '../../../services/emails/send.js';

/**
 * The send routes' body limit: the attachments base64-encoded (4/3 of
 * `send.max_attachment_bytes`) plus `server.max_body_bytes` for the rest.
 */
export const sendBodyLimit = {
  // Shared: a relay node's submission listener advertises and enforces no more (docs/submission.md).
  maxOf: (config: Config) => sendBodyLimitBytes(config),
  description: 'Request body larger than 4/3 × `send.max_attachment_bytes` + `server.max_body_bytes` (about 14.3 MiB by default)',
};

/** Sandbox mode is the key's (fixed at creation); sessions and platform credentials send for real. */
export async function sendContext(c: Context<ProjectEnv>, route: 'emails.send' | 'emails.batch', key: string | undefined): Promise<SendContext> {
  const principal = c.get('principal');
  const sandbox = principal.kind === 'key' && principal.sandbox;
  return {
    db: c.get('db'),
    store: c.env.MAIL_STORE,
    config: c.get('config'),
    projectId: c.get('projectId'),
    sandbox,
    // The raw body, as received: the JSON validator kept its text. Sandbox keys have a key namespace of their own.
    idempotency: key === undefined ? undefined : { key, route, requestHash: await requestHash(await c.req.text()), sandbox },
  };
}

/** A replayed answer says so (as Stripe's `Idempotent-Replayed`). */
export const replayHeaders = (replayed: boolean): Record<string, string> => (replayed ? { 'Idempotent-Replayed': 'true' } : {});
