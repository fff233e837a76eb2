// The node's state directory: who it is (node.json), what it last knew of the
// registered domains (domains.json) and the mail it holds (spool/).
import { chmod, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writePrivateFile } from './write-private-file.js';

/** `<state>/node.json`: written by `edgemail relay enroll`, mode 0600. */
export interface NodeState {
  /** The edge's base URL, as given to `--edge`. */
  edge_url: string;
  node_id: string;
  name: string;
  /** The node credential (`myr_…`). */
  token: string;
  enrolled_at: string;
}

/** Raised when the directory holds no node.json: the node was never enrolled. */
export class NotEnrolledError extends Error {
  constructor(readonly stateDir: string) {
    super(`no relay node is enrolled in ${stateDir}: run \`edgemail relay enroll --edge <url> --key <myk_ key> --state-dir ${stateDir}\` first`);
    this.name = 'NotEnrolledError';
  }
}

/**
 * Where a node keeps its state when `--state-dir` is not given: `relay-node/`
 * under the local stack's data directory (`EDGEMAIL_DATA_DIR`, else `.data/`
 * of this checkout), the same place `pnpm dev` uses.
 */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const data = env.EDGEMAIL_DATA_DIR ?? fileURLToPath(new URL('../../../.data', import.meta.url));
  return join(data, 'relay-node');
}

export const nodeStateFile = (stateDir: string) => join(stateDir, 'node.json');
export const domainsFile = (stateDir: string) => join(stateDir, 'domains.json');
export const spoolDir = (stateDir: string) => join(stateDir, 'spool');

/** Writes node.json (0600, directory 0700), replacing any earlier enrolment; the spool is kept. */
export async function writeNodeState(stateDir: string, state: NodeState): Promise<void> {
  await writePrivateFile(nodeStateFile(stateDir), `${JSON.stringify(state, null, 2)}\n`);
}

/** Reads node.json; throws NotEnrolledError when absent, and tightens a copy left readable by others. */
export async function readNodeState(stateDir: string): Promise<NodeState> {
  const file = nodeStateFile(stateDir);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new NotEnrolledError(stateDir);
    throw err;
  }
  // A copy restored from a backup may have lost its mode; the token is a secret.
  if (((await stat(file)).mode & 0o077) !== 0) await chmod(file, 0o600);
  const state = JSON.parse(text) as Partial<NodeState>;
  for (const key of ['edge_url', 'node_id', 'token'] as const) {
    if (typeof state[key] !== 'string' || !state[key]) throw new Error(`${file} lacks ${key}: enrol the node again`);
  }
  return state as NodeState;
}

/** Whether a node is enrolled in `stateDir`. */
export async function isEnrolled(stateDir: string): Promise<boolean> {
  return stat(nodeStateFile(stateDir)).then(() => true, () => false);
}
