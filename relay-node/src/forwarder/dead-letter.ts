// Messages the edge refused for good (400): moved out of the way into
// `<spool>/dead/`, kept for an operator to look at, never forwarded again.
import { copyFile, mkdir, open, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Spool } from '../spool/index.js';

/**
 * Moves message `id` into `<spool>/dead/` (body `<id>.eml`, metadata
 * `<id>.json`, and `<id>.reason.txt` saying why), then drops it from the
 * spool. Order matters for crashes: the metadata is copied first and the body
 * moved second, so a crash leaves the message either still pending (to be
 * refused again) or whole in `dead/`.
 */
export async function buryMessage(spool: Spool<unknown>, id: string, reason: string): Promise<string> {
  const dead = join(spool.dir, 'dead');
  await mkdir(dead, { recursive: true, mode: 0o700 });
  await copyFile(join(spool.dir, `${id}.json`), join(dead, `${id}.json`));
  await writeFile(join(dead, `${id}.reason.txt`), `${new Date().toISOString()} ${reason}\n`, { mode: 0o600 });
  await rename(join(spool.dir, `${id}.eml`), join(dead, `${id}.eml`));
  const handle = await open(dead, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  await spool.remove(id);
  return dead;
}
