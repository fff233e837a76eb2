// The permission check, mounted by `defineRoute` from each route's declaration:
// resolves the project the request acts in and judges the principal there.
import { createMiddleware } from 'hono/factory';
import { eq } from 'drizzle-orm';
import { projects } from '@edgemail/schema';
import { judge, roleRank, rolePermissions, sessionOnlyPermissions, type Role } from '@edgemail/shared';
import { badRequest, forbidden, notFound } from '../http/errors.js';
import { PROJECT_HEADER, projectHeader } from './project-header.js';
import type { AppEnv } from '../env.js';
import type { RouteAccess } from '../http/define-route.js';

const isSessionOnly = (p: string) => (sessionOnlyPermissions as readonly string[]).includes(p);

export const authorize = (access: RouteAccess, role?: Role) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const principal = c.get('principal');
    if (access === 'platform:admin') {
      if (principal.kind !== 'platform') throw forbidden('admin privileges required');
      return next();
    }
    if (access === 'authenticated') return next();

    let projectId: string;
    let held: readonly string[];
    switch (principal.kind) {
      case 'key':
        if (isSessionOnly(access)) throw forbidden(`permission ${access} is not available to API keys`);
        projectId = principal.projectId;
        held = principal.permissions;
        break;
      case 'platform': {
        const requested = projectHeader(c);
        if (!requested) throw badRequest(`${PROJECT_HEADER} header required with a platform credential outside /api/v1/admin`);
        const [found] = await c.get('db').select({ id: projects.id }).from(projects).where(eq(projects.id, requested));
        if (!found) throw notFound('project not found');
        projectId = found.id;
        held = rolePermissions('owner');
        break;
      }
      case 'session': {
        const m = principal.membership;
        if (!m) {
          throw projectHeader(c)
            ? forbidden('not a member of this project')
            : badRequest(`no project selected: send ${PROJECT_HEADER}`);
        }
        if (role && roleRank[m.role] < roleRank[role]) throw forbidden(`project ${role} role required`);
        projectId = m.projectId;
        held = m.groupPermissions ?? rolePermissions(m.role);
        break;
      }
    }

    const grant = judge(held, access);
    if (grant === 'missing-action') throw forbidden(`permission ${access} required`);
    if (grant === 'no-access') throw forbidden(`no access to ${access.split(':')[0]} in this project`);
    c.set('projectId', projectId);
    c.set('held', held);
    await next();
  });
