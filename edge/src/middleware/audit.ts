// Records every successful mutating request: project activity when the
// request acts in a project, else the acting principal's security trail.
// Events go to the isolate's queue and are written after the response (then
// the project ones go to the project's console event stream).
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../env.js';
import { actorName, type Principal } from './principal.js';
import { auditQueue } from '../services/audit/queue.js';
import { writeAuditEvents } from '../services/audit/write.js';
import { publishAuditEvents } from '../services/event-stream/publish.js';

const actorId = (p: Principal) => (p.kind === 'session' ? p.userId : p.id);

export const audit = () =>
  createMiddleware<AppEnv>(async (c, next) => {
    await next();
    const type = c.get('auditType');
    if (!type || c.res.status >= 400) return; // reads and rejected requests are not recorded
    const principal = c.get('principal');
    const projectId = c.get('projectId') ?? null;
    const queue = auditQueue(c.get('config')['audit.queue_size']);
    queue.enqueue({
      category: projectId ? 'project' : 'security',
      type,
      projectId,
      actorId: actorId(principal),
      actorEmail: actorName(principal),
      clientIp: c.get('clientIp'),
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
    });
    // The stream hand-overs run beside the next batches' writes; the request's waitUntil covers both.
    const published: Promise<void>[] = [];
    const write = writeAuditEvents(c.get('db'), (rows) => published.push(publishAuditEvents(c.env, rows)));
    c.executionCtx.waitUntil(queue.flush(write).then(() => Promise.all(published)));
  });
