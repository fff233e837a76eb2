// Messages the edge refused for good (400): moved out of the way into
// `<spool>/dead/` with the reason, kept for an operator to look at, never
// forwarded again, and counted: the heartbeat reports them, and while they
// pass `relay_node.spool.max_dead_letter_bytes` the node takes no new mail.
import { copyFile, mkdir, open, readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Spool } from '../../spool/index.js';

/** One message in `dead/`, as `edgemail relay dead-letters` lists it. */
export interface DeadLetter {
  /** The spool id. */
  id: string;
  /** Bytes of the message as spooled (`<id>.eml`). */
  size: number;
  /** When it was moved to `dead/` (RFC 3339), from its reason file. */
  buried_at: string | null;
  /** Why the edge refused it. */
  reason: string;
}

export interface DeadLetterTally {
  /** Messages in `dead/`. */
  count: number;
  /** Bytes of every file in `dead/` (message, metadata and reason). */
  bytes: number;
}

export interface DeadLetters {
  readonly dir: string;
  /** The last count: kept up to date by bury(), recounted by refresh(). */
  tally(): DeadLetterTally;
  /** Recounts the folder (an operator may have removed files by hand). */
  refresh(): Promise<DeadLetterTally>;
  /** Moves message `id` out of the spool into `dead/`, with `reason`. */
  bury(id: string, reason: string): Promise<void>;
}

const deadDir = (spoolDir: string) => join(spoolDir, 'dead');

/**
 * Counts `<spool>/dead/` now and keeps counting as messages are buried.
 * @example const dead = await openDeadLetters(spool); await dead.bury(id, 'invalid meta: …');
 */
export async function openDeadLetters(spool: Spool<unknown>): Promise<DeadLetters> {
  const dir = deadDir(spool.dir);
  let current: DeadLetterTally = await countDeadLetters(spool.dir);
  return {
    dir,
    tally: () => current,
    async refresh() {
      current = await countDeadLetters(spool.dir);
      return current;
    },
    async bury(id, reason) {
      const bytes = await buryMessage(spool, id, reason);
      current = { count: current.count + 1, bytes: current.bytes + bytes };
    },
  };
}

/**
 * Moves message `id` into `<spool>/dead/` (body `<id>.eml`, metadata
 * `<id>.json`, and `<id>.reason.txt`: the time and the reason), then drops it
 * from the spool; resolves to the bytes it added to `dead/`. Order matters
 * for crashes: the metadata is copied first and the body moved second, so a
 * crash leaves the message either still pending (to be refused again) or
 * whole in `dead/`.
 */
export async function buryMessage(spool: Spool<unknown>, id: string, reason: string): Promise<number> {
  const dead = deadDir(spool.dir);
  await mkdir(dead, { recursive: true, mode: 0o700 });
  await copyFile(join(spool.dir, `${id}.json`), join(dead, `${id}.json`));
  await writeFile(join(dead, `${id}.reason.txt`), `${new Date().toISOString()} ${escapeControls(reason)}\n`, { mode: 0o600 });
  await rename(join(spool.dir, `${id}.eml`), join(dead, `${id}.eml`));
  const handle = await open(dead, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  await spool.remove(id);
  const sizes = await Promise.all(['.eml', '.json', '.reason.txt'].map((ext) => stat(join(dead, id + ext)).then((s) => s.size, () => 0)));
  return sizes.reduce((a, b) => a + b, 0);
}

/**
 * A reason as one printable line: it may quote the sender's bytes (the edge's
 * refusal names a header as sent), so control characters, newlines included,
 * are written as `\xHH` / `\uHHHH` rather than reaching a terminal.
 *
 * @example escapeControls('bad \u001b[2J name') // 'bad \\x1b[2J name'
 */
export function escapeControls(text: string): string {
  // C0, DEL, C1 and the Unicode line and paragraph separators.
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16)}`;
  });
}

/** The names in `dead/`; a missing folder is empty. */
async function deadLetterNames(dir: string): Promise<string[]> {
  return readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [] as string[];
    throw err;
  });
}

/** Every file of `dead/` counted; a message is its `.eml`. */
export async function countDeadLetters(spoolDir: string): Promise<DeadLetterTally> {
  const dir = deadDir(spoolDir);
  const names = await deadLetterNames(dir);
  const sizes = await Promise.all(names.map((name) => stat(join(dir, name)).then((s) => (s.isFile() ? s.size : 0), () => 0)));
  return { count: names.filter((n) => n.endsWith('.eml')).length, bytes: sizes.reduce((a, b) => a + b, 0) };
}

/**
 * The messages of `<spoolDir>/dead/`, oldest first (ids sort by arrival),
 * read straight from the folder: the node need not be running.
 */
export async function listDeadLetters(spoolDir: string): Promise<DeadLetter[]> {
  const dir = deadDir(spoolDir);
  const names = await deadLetterNames(dir);
  const ids = names.filter((n) => n.endsWith('.eml')).map((n) => n.slice(0, -'.eml'.length)).sort();
  return Promise.all(ids.map(async (id) => {
    const { size } = await stat(join(dir, `${id}.eml`));
    const text = (await readFile(join(dir, `${id}.reason.txt`), 'utf8').catch(() => '')).trim();
    // `<RFC 3339 time> <reason>`, as buryMessage writes it.
    const match = /^(\d{4}-\d\d-\d\dT[\d:.]+Z) ([\s\S]*)$/.exec(text);
    return { id, size, buried_at: match ? match[1]! : null, reason: match ? match[2]! : text || '(no reason recorded)' };
  }));
}
