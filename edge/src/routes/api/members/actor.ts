// Who is changing the project's people, as the members services judge it.
import type { Context } from 'hono';
import type { ProjectEnv } from '../../../http/define-route.js';
import type { PeopleActor } from '../../../services/members/types.js';

/**
 * An owner's session and a platform credential (owner-equivalent, spec item 3)
 * may grant and take the owner role; so may a key holding the route's
 * permission, as keys are judged on permissions alone (docs/console.md).
 */
export function peopleActor(c: Context<ProjectEnv>): PeopleActor {
  const p = c.get('principal');
  switch (p.kind) {
    case 'session': return { userId: p.userId, owner: p.membership?.role === 'owner' };
    case 'platform': return { userId: null, owner: true };
    case 'key': return { userId: null, owner: true };
  }
}
