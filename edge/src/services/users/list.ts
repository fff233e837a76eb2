import { asc } from 'drizzle-orm';
import { users } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { presentUser, userColumns } from './present.js';

export async function listUsers(db: Db) {
  const rows = await db.select(userColumns).from(users).orderBy(asc(users.createdAt), asc(users.id));
  return rows.map(presentUser);
}
