// The permission check, mounted by `defineRoute` from each route's declaration:
// resolves the project the request acts in and judges the principal there.
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { isSessionOnlyPermission, judge, roleRank, rolePermissions, type Permission, type Role, type SessionOnlyPermission } from '@edgemail/shared';
import { badRequest, forbidden, notFound } from '../http/errors.js';
import { projectExists } from '../services/projects/exists.js';
import { SSO_REQUIRED, ssoBlocks } from '../services/console/sso-rule.js';
import { PROJECT_HEADER, projectHeader } from './project-header.js';
import type { AppEnv } from '../env.js';

/**
 * `platform:admin`: platform credential only (the admin surface);
 * `authenticated`: any valid credential, no project needed;
 * `session`: a signed-in browser session, no project needed (the console's account routes, `/app/api`);
 * `public`: no credential at all: the route proves who is calling itself
 * (sign-in, accepting an invitation, a password reset; `/app/api` only);
 * otherwise the `<resource>:<action>` judged in the request's project.
 */
export type RouteAccess = Permission | SessionOnlyPermission | 'platform:admin' | 'authenticated' | 'session' | 'public';

/** The accesses that may pass without a project; every other one sets `projectId` or refuses. */
export type ProjectlessAccess = 'platform:admin' | 'authenticated' | 'session' | 'public';

/** A platform credential has a project only when the header names an existing one. */
async function platformProject(c: Context<AppEnv>): Promise<string> {
  const requested = projectHeader(c);
  if (!requested) throw badRequest(`${PROJECT_HEADER} header required with a platform credential outside /api/v1/admin`);
  if (!(await projectExists(c.get('db'), requested))) throw notFound('project not found');
  return requested;
}

/** What a route declares beyond its one permission (defineRoute's `alsoGrantedBy` and `sandboxPermission`). */
export interface AccessAlternatives {
  /** Each of these passes the check as well as `access` does (`GET /api/v1/sandbox/emails`: `emails:read`). */
  alsoGrantedBy?: readonly Permission[];
  /** What a sandbox key is judged on instead of `access` (spec, "API key": `sandbox:write` on the send routes). */
  sandboxPermission?: Permission;
}

/**
 * @param access the route's declared permission; `platform:admin` routes are
 *               gated by path (`requirePlatformCredential`), not here
 * @param role   the route's session role gate: a session is judged by that
 *               role alone, as the spec judges sessions by membership role
 * @param alternatives other permissions that pass, and a sandbox key's own
 */
export const authorize = (access: RouteAccess, role?: Role, alternatives: AccessAlternatives = {}) =>
  createMiddleware<AppEnv>(async (c, next) => {
    if (access === 'platform:admin' || access === 'public') return next();
    const principal = c.get('principal');
    if (access === 'session') {
      if (principal.kind !== 'session') throw forbidden('a signed-in console session is required');
      return next();
    }
    let projectId: string;
    let held: readonly string[] | 'role-gate-passed';

    let required: RouteAccess = access;

    switch (principal.kind) {
      case 'key':
        if (isSessionOnlyPermission(access)) throw forbidden(`permission ${access} is not available to API keys`);
        if (principal.sandbox && alternatives.sandboxPermission) required = alternatives.sandboxPermission;
        projectId = principal.projectId;
        held = principal.permissions;
        break;
      case 'platform':
        projectId = await platformProject(c);
        held = rolePermissions('owner');
        break;
      case 'session': {
        const m = principal.membership;
        if (m && ssoBlocks(m.ssoRequired, m.ssoAccepted)) {
          // The project-free route needs no project: only a project asked for by name is refused.
          if (access === 'authenticated' && !projectHeader(c)) return next();
          throw forbidden(SSO_REQUIRED);
        }
        if (!m) {
          if (projectHeader(c)) throw forbidden('not a member of this project');
          if (access === 'authenticated') return next(); // signed in, no project needed
          throw badRequest(`no project selected: send ${PROJECT_HEADER}`);
        }
        projectId = m.projectId;
        if (role) {
          if (roleRank[m.role] < roleRank[role]) throw forbidden(`project ${role} role required`);
          held = 'role-gate-passed';
        } else {
          held = m.groupPermissions ?? rolePermissions(m.role);
        }
        break;
      }
    }

    if (required !== 'authenticated' && held !== 'role-gate-passed') {
      const grant = judge(held, required);
      const others = alternatives.alsoGrantedBy ?? [];
      if (grant !== 'granted') {
        const otherGrants = others.map((p) => judge(held, p));
        if (!otherGrants.includes('granted')) {
          // Nothing on any of the resources reads as the spec's "no access"; else name every way in.
          if (grant === 'no-access' && otherGrants.every((g) => g === 'no-access')) {
            throw forbidden(`no access to ${required.split(':')[0]} in this project`);
          }
          throw forbidden(`permission ${[required, ...others].join(' or ')} required`);
        }
      }
    }
    // Reached by every access but ProjectlessAccess (the early returns above): what ProjectEnv promises.
    c.set('projectId', projectId);
    await next();
  });
