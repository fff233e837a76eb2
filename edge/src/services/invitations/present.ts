import type { z } from '@hono/zod-openapi';
import type { InvitationSchema } from '../../contracts/member.js';

export type InvitationRecord = z.infer<typeof InvitationSchema>;
export type InvitationRow = {
  id: string; project_id: string; email: string; role: InvitationRecord['role']; group_id: string | null;
  invited_by: string | null; expires_at: string | Date; created_at: string | Date;
};

export const invitationColumns = 'id, project_id, email, role, group_id, invited_by, expires_at, created_at';

export const presentInvitation = (r: InvitationRow): InvitationRecord => ({
  id: r.id, project_id: r.project_id, email: r.email, role: r.role, group_id: r.group_id, invited_by: r.invited_by,
  expires_at: new Date(r.expires_at).toISOString(), created_at: new Date(r.created_at).toISOString(),
});
