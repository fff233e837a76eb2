// Who is changing the project's people, as the members services judge it.
import type { Context } from 'hono';
import type { ProjectEnv } from '../../../http/define-route.js';
import type { PeopleActor } from '../../../services/members/types.js';

/**
 * An owner's session and a platform credential (owner-equivalent, spec item 3)
 * may grant and take the owner role. A project key never may, whatever it
 * holds, `*` included (docs/console.md, "Refused to every project key"): an
 * admin mints keys, so a key that could would make any admin an owner.
 */
export function peopleActor(c: Context<ProjectEnv>): PeopleActor {
  const p = c.get('principal');
  switch (p.kind) {
    case 'session': return { userId: p.userId, owner: p.membership?.role === 'owner', key: false };
    case 'platform': return { userId: null, owner: true, key: false };
    case 'key': return { userId: null, owner: false, key: true };
  }
}
