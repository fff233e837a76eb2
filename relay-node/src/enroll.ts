// `edgemail relay enroll`: trade a project key holding `relay:write` for a
// node credential, kept in `<state>/node.json` (0600).
import { hostname } from 'node:os';
import { parseIp } from '@edgemail/shared';
import { createEdgeClient } from './edge/client.js';
import { isEnrolled, writeNodeState, type NodeState } from './state/index.js';
import { NODE_VERSION } from './version.js';

export interface EnrollOptions {
  /** The edge's base URL. */
  edgeUrl: string;
  /** `myk_…` with `relay:write`. */
  key: string;
  /** The node's name at the edge; the host name by default. */
  name?: string;
  stateDir: string;
  /** Replace an existing enrolment (the spool is kept). */
  force?: boolean;
  fetch?: typeof fetch;
}

/** Raised when node.json exists and `force` was not given. */
export class AlreadyEnrolledError extends Error {
  constructor(stateDir: string) {
    super(`a relay node is already enrolled in ${stateDir}; pass --force to replace its credential (its spool is kept)`);
    this.name = 'AlreadyEnrolledError';
  }
}

/**
 * Whether a URL's host is this machine: 127.0.0.0/8, ::1 or `localhost`. Only
 * there may the key and the credential travel in plain text.
 */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || parseIp(hostname)?.range() === 'loopback';
}

/**
 * Enrols at the edge and writes node.json. The credential is written before
 * anything else is printed, so a node that enrolled is never left without it.
 *
 * @example const { node_id } = await enrollNode({ edgeUrl: 'http://127.0.0.1:8787', key, stateDir: '.data/relay-node' });
 */
export async function enrollNode(options: EnrollOptions): Promise<NodeState> {
  const url = new URL(options.edgeUrl); // throws on a malformed --edge
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`--edge must be an http(s) URL, got ${options.edgeUrl}`);
  // The key (and then the node credential) would cross the network readable by anyone on the path.
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new Error(`--edge ${url.origin} is plain http: the key and the node credential would cross the network unencrypted; use https:// (http:// is allowed only for loopback: 127.0.0.0/8, ::1, localhost)`);
  }
  if (!options.force && (await isEnrolled(options.stateDir))) throw new AlreadyEnrolledError(options.stateDir);
  const name = (options.name ?? hostname()).trim().slice(0, 100) || 'relay';
  const edgeUrl = url.origin + url.pathname.replace(/\/+$/, '');
  const edge = createEdgeClient({ url: edgeUrl, version: NODE_VERSION, fetch: options.fetch });
  const answer = await edge.enroll(options.key, { name, version: NODE_VERSION });
  const state: NodeState = { edge_url: edgeUrl, node_id: answer.node.id, name: answer.node.name, token: answer.token, enrolled_at: new Date().toISOString() };
  await writeNodeState(options.stateDir, state);
  return state;
}
