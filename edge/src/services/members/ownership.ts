// The one refusal of an ownership action, worded for who asked: a project key
// is told no key may (whatever it holds), an admin's session that an owner must.
import { forbidden, type ServiceError } from '../errors.js';
import type { PeopleActor } from './types.js';

export const KEY_OWNERSHIP_REFUSAL = 'project keys cannot change ownership: use an owner\'s session or a platform credential';

/** The 403 for an actor that is not an owner; `sessionMessage` is the admin's. */
export function ownershipRefused(actor: PeopleActor, sessionMessage: string): ServiceError {
  return forbidden(actor.key ? KEY_OWNERSHIP_REFUSAL : sessionMessage);
}
