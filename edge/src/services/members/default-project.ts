// A user's default project (users.default_project_id): the project a session
// falls back to without X-Service-Project-Id. Set when the user first gets a
// project; moved to their oldest remaining membership when they leave it.
import { sql, type SQL } from 'drizzle-orm';
import { memberships, users } from '@edgemail/schema';

/** After `userId` left `projectId` (nothing when they are still its member): point their default elsewhere (or nowhere) if it was that project. */
export const reassignDefaultProject = (userId: string, projectId: string): SQL => sql`
  update ${users} u set default_project_id = (
    select m.project_id from ${memberships} m where m.user_id = u.id and m.project_id <> ${projectId}
    order by m.created_at, m.project_id limit 1)
  where u.id = ${userId} and u.default_project_id = ${projectId}
    and not exists (select 1 from ${memberships} m where m.user_id = u.id and m.project_id = ${projectId})`;
