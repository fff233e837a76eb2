import { stylesheets } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import { conflict } from '../errors.js';
import type { CreateStylesheetInput } from '../../contracts/stylesheet.js';
import { presentStylesheet } from './present.js';

export const stylesheetNameTaken = (name: string) => conflict(`a stylesheet named "${name}" already exists`);

export async function createStylesheet(db: Db, projectId: string, input: CreateStylesheetInput) {
  try {
    const [row] = await db.insert(stylesheets).values({ projectId, name: input.name, css: input.css }).returning();
    return { stylesheet: presentStylesheet(row!) };
  } catch (e) {
    if (isUniqueViolation(e)) throw stylesheetNameTaken(input.name);
    throw e;
  }
}
