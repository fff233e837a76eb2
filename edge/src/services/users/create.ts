import { users } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import { conflict } from '../errors.js';
import { presentUser, userColumns } from './present.js';

export async function createUser(db: Db, input: { email: string; name: string }) {
  try {
    const [row] = await db.insert(users).values({ email: input.email, name: input.name }).returning(userColumns);
    return presentUser(row!);
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict(`a user with email ${input.email} already exists`);
    throw e;
  }
}
