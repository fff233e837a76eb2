// `outbound.capture_dir`: delivery into a directory instead of the network
// (`pnpm dev` has no Internet). One `<email_id>.eml` per recipient, written
// whole or not at all.
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';

/**
 * Writes `bytes` to `<dir>/<emailId>.eml` atomically (a temp file beside it,
 * fsynced, then renamed over the name), creating `dir` when missing. A
 * repeat (the same recipient claimed again) replaces the file. Answers the
 * absolute path.
 *
 * @example const path = await captureMessage('.data/outbound-capture', job.email_id, bytes);
 */
export async function captureMessage(dir: string, emailId: string, bytes: Buffer): Promise<string> {
  // The edge's ids are UUIDs; anything else must not become a path outside `dir`.
  if (!/^[A-Za-z0-9._-]{1,200}$/.test(emailId) || emailId.startsWith('.')) throw new Error(`email id ${JSON.stringify(emailId)} cannot name a capture file`);
  const absolute = resolve(dir);
  await mkdir(absolute, { recursive: true });
  const path = join(absolute, `${emailId}.eml`);
  const temp = join(absolute, `.${emailId}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    const file = await open(temp, 'wx', 0o600);
    try {
      await file.writeFile(bytes);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw err;
  }
  return path;
}
