import { users } from '@edgemail/schema';

export const userColumns = {
  id: users.id, email: users.email, name: users.name, defaultProjectId: users.defaultProjectId, platformAdmin: users.platformAdmin, createdAt: users.createdAt,
};
type Row = Pick<typeof users.$inferSelect, keyof typeof userColumns>;

export const presentUser = (row: Row) => ({
  id: row.id, email: row.email, name: row.name, default_project_id: row.defaultProjectId, platform_admin: row.platformAdmin, created_at: row.createdAt.toISOString(),
});
