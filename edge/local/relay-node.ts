// The local stack's relay node: enrolled on first start, then run in-process
// beside the Worker with its state under `.data/relay-node`.
//
// Enrolment needs a project key holding relay:write. Locally there is no
// operator yet to mint one, so the stack makes it straight in the database
// with the same service the API uses: a project named `local-relay` (created
// once, found by name after), a key holding only relay:write, used for the one
// `POST /relay/v1/enroll` through the real Worker, and revoked right after.
//
// Outbound mail: the local stack has no Internet, so unless the environment
// says where mail goes (SERVICE_OUTBOUND_SMARTHOST, or SERVICE_OUTBOUND_CAPTURE_DIR
// itself), the node writes each message as `<data dir>/outbound-capture/<email_id>.eml`
// and logs the file's name: a first send visibly arrives somewhere.
import { dirname, join } from 'node:path';
import { and, asc, eq } from 'drizzle-orm';
import { apiKeys, projects, relayNodes } from '@edgemail/schema';
import { loadConfig } from '@edgemail/shared';
import { createApiKey } from '../src/services/api-keys/create.js';
import { setNodeScope } from '../src/services/relay-nodes/scope.js';
import { withDatabase } from './with-database.js';
import { createConsoleLog, enrollNode, isEnrolled, readNodeState, startRelayNode, type RelayNode } from '../../relay-node/src/index.js';
import { writeNodeState } from '../../relay-node/src/state/index.js';

/** The project local relay nodes are enrolled under. */
export const LOCAL_RELAY_PROJECT = 'local-relay';

export interface LocalRelayOptions {
  /** The Worker's URL. */
  edgeUrl: string;
  /** The application role's URL of the stack's database. */
  databaseUrl: string;
  /** `.data/relay-node`. */
  stateDir: string;
  port: number;
  /** The submission port (docs/submission.md); none: no submission listener. */
  submissionPort?: number;
  host: string;
  /** The stack's `SERVICE_*` settings (the node reads the same ones as the edge). */
  settings: Record<string, string>;
  log: (line: string) => void;
  /** Where outbound mail is captured; `outbound-capture` beside `stateDir` (`.data/outbound-capture`) by default. */
  captureDir?: string;
}

/** The `SERVICE_*` settings that say where outbound mail goes; with neither, the local node captures it. */
const OUTBOUND_DESTINATION_SETTINGS = ['SERVICE_OUTBOUND_CAPTURE_DIR', 'SERVICE_OUTBOUND_SMARTHOST'];

/** `settings` with `SERVICE_OUTBOUND_CAPTURE_DIR` added, unless the caller chose a destination itself. */
export function localOutboundSettings(settings: Record<string, string>, captureDir: string): Record<string, string> {
  if (OUTBOUND_DESTINATION_SETTINGS.some((name) => name in settings)) return settings;
  return { ...settings, SERVICE_OUTBOUND_CAPTURE_DIR: captureDir };
}

/**
 * Makes sure `stateDir` holds a credential this stack's edge knows and has
 * not revoked (enrolling anew otherwise: a first start, or a database reset
 * while `.data/relay-node` stayed), pointed at the Worker's URL now, then
 * starts the node.
 */
export async function startLocalRelayNode(options: LocalRelayOptions): Promise<RelayNode> {
  await ensureEnrolled(options);
  const settings = localOutboundSettings(options.settings, options.captureDir ?? join(dirname(options.stateDir), 'outbound-capture'));
  const { config } = loadConfig({ SERVICE_SERVER_PUBLIC_URL: options.edgeUrl, ...settings });
  if (config['outbound.capture_dir']) {
    options.log(`outbound mail is not sent: each message is written to ${config['outbound.capture_dir']}/<email_id>.eml (set SERVICE_OUTBOUND_SMARTHOST=host:port to relay it)`);
  } else {
    options.log(`outbound mail goes to ${config['outbound.smarthost'] ? `the smarthost ${config['outbound.smarthost']}` : 'recipient MX hosts'}`);
  }
  // Ctrl-C should not sit out a 30 s delivery: what is cut off is reported deferred and retried.
  return startRelayNode({ stateDir: options.stateDir, config, port: options.port, submissionPort: options.submissionPort, host: options.host, log: createConsoleLog('[relay]', { level: config['relay_node.log_level'] }), drainMs: 3000, outbound: { stopTimeoutMs: 3000 } });
}

async function ensureEnrolled(options: LocalRelayOptions): Promise<void> {
  if (await isEnrolled(options.stateDir)) {
    const state = await readNodeState(options.stateDir);
    // Known and live: (re)made installation-wide, which a node enrolled before scopes existed was not.
    const known = await withDatabase(options.databaseUrl, async (db) => {
      const [row] = await db.select({ id: relayNodes.id }).from(relayNodes).where(and(eq(relayNodes.id, state.node_id), eq(relayNodes.revoked, false)));
      return !!row && setNodeScope(db, state.node_id, true);
    });
    if (known) {
      // The same database, the Worker on another port (EDGEMAIL_PORT changed): the node keeps its
      // enrolment and is pointed at the new URL; enrolling again would leave its old record behind.
      if (state.edge_url !== options.edgeUrl) {
        await writeNodeState(options.stateDir, { ...state, edge_url: options.edgeUrl });
        options.log(`relay node ${state.node_id}: the edge moved from ${state.edge_url} to ${options.edgeUrl}; ${options.stateDir}/node.json updated`);
      }
      return;
    }
    options.log(`relay node ${state.node_id} in ${options.stateDir} is not known to this edge (or was revoked): enrolling it again, its spool is kept`);
  }
  const key = await withDatabase(options.databaseUrl, async (db) => {
    const [found] = await db.select({ id: projects.id }).from(projects).where(eq(projects.name, LOCAL_RELAY_PROJECT)).orderBy(asc(projects.createdAt)).limit(1);
    const projectId = found?.id ?? (await db.insert(projects).values({ name: LOCAL_RELAY_PROJECT }).returning({ id: projects.id }))[0]!.id;
    const created = await createApiKey(db, projectId, { name: 'local relay enrolment', permissions: ['relay:write'], allowed_ips: [], sandbox: false }, null);
    return { id: created.api_key.id, token: created.token };
  });
  try {
    const state = await enrollNode({ edgeUrl: options.edgeUrl, key: key.token, name: 'local', stateDir: options.stateDir, force: true });
    // The local MX serves every project's domains, as an operator's node does (`edgemail relay scope`).
    await withDatabase(options.databaseUrl, (db) => setNodeScope(db, state.node_id, true));
    options.log(`relay node enrolled as ${state.node_id} (project ${LOCAL_RELAY_PROJECT}, installation-wide); credential in ${options.stateDir}/node.json`);
  } finally {
    await withDatabase(options.databaseUrl, (db) =>
      db.update(apiKeys).set({ revoked: true, revokedAt: new Date() }).where(eq(apiKeys.id, key.id)));
  }
}
