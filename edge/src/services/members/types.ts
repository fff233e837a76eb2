import type { z } from '@hono/zod-openapi';
import type { MemberSchema } from '../../contracts/member.js';

export type MemberRecord = z.infer<typeof MemberSchema>;

/**
 * Who changes a membership. `owner`: may grant or take the owner role and
 * change, remove or invite an owner (an owner's session or a platform
 * credential). `key`: a project key, which never may, whatever it holds
 * (docs/console.md, "Refused to every project key"): a key is minted by an
 * admin as easily as by an owner, so ownership through one would let an admin
 * make themselves owner.
 */
export interface PeopleActor { userId: string | null; owner: boolean; key: boolean }
