// What `pnpm dev` is running on, recorded in `.data/stack.json` so that the
// operator binary finds the stack however it was started (EDGEMAIL_PG_PORT=25432
// pnpm dev, then plain `pnpm edgemail admin create-credential`). Ports only: the
// logins stay in their own 0600 file. Light on imports: the binary reads it.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';

export interface StackRecord {
  pgPort: number;
  bridgePort: number;
  workerPort: number;
  /** The relay node's inbound (MX) SMTP port. */
  inboundPort: number;
  /** The relay node's submission port (absent in a record written before it existed). */
  submissionPort?: number;
  /** The local DNS's ordinary DNS port (UDP and TCP; absent in a record written before it existed). */
  dnsPort?: number;
  /** The `pnpm dev` process, while it runs. */
  pid: number;
  startedAt: string;
}

export const stackRecordFile = (dataDir: string) => `${dataDir.replace(/\/+$/, '')}/stack.json`;

/** Written whole under a temporary name, so a reader never sees half a file. */
export function writeStackRecord(dataDir: string, record: StackRecord): void {
  const file = stackRecordFile(dataDir);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o644 });
  renameSync(tmp, file);
}

/** The last record `pnpm dev` wrote in `dataDir`, or null when it never ran there (or the file is unreadable). */
export function readStackRecord(dataDir: string): StackRecord | null {
  try {
    const parsed = JSON.parse(readFileSync(stackRecordFile(dataDir), 'utf8')) as Partial<StackRecord>;
    return Number.isInteger(parsed.pgPort) ? parsed as StackRecord : null;
  } catch {
    return null;
  }
}
