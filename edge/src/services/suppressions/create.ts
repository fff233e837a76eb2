import { suppressions } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import { conflict } from '../errors.js';
import type { CreateSuppressionInput } from '../../contracts/suppression.js';
import { presentSuppression, suppressionColumns } from './present.js';

/** Adds a sender the project refuses; `input.address` is already bare and lower case. */
export async function createSuppression(db: Db, projectId: string, input: CreateSuppressionInput) {
  try {
    const [row] = await db.insert(suppressions)
      .values({ projectId, address: input.address, reason: input.reason })
      .returning(suppressionColumns);
    return presentSuppression(row!);
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict(`address ${input.address} is already suppressed`);
    throw e;
  }
}
