import type { z } from '@hono/zod-openapi';
import type { MemberSchema } from '../../contracts/member.js';

export type MemberRecord = z.infer<typeof MemberSchema>;

/**
 * Who changes a membership. `owner`: may grant or take the owner role and
 * change or remove an owner (an owner's session, a platform credential, or a
 * key holding the route's permission: keys are judged on permissions alone).
 */
export interface PeopleActor { userId: string | null; owner: boolean }
