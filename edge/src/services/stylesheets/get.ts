import type { Db } from '../../db/client.js';
import { findStylesheet } from './find.js';
import { presentStylesheet } from './present.js';

export async function getStylesheet(db: Db, projectId: string, id: string) {
  return { stylesheet: presentStylesheet(await findStylesheet(db, projectId, id)) };
}
