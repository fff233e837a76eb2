#!/usr/bin/env node
// `edgemail-relay`: the relay node as an installed program (the npm package
// `pnpm relay:pack` makes; docs/operations.md). Production defaults: inbound
// on 25, submission on 587 and 465 (implicit TLS, when submission TLS is on),
// JSON log lines on stdout, the state in /var/lib/edgemail-relay.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '@edgemail/shared';
import { isFatalEdgeError } from '../edge/errors.js';
import { enrollNode } from '../enroll.js';
import { NODE_VERSION } from '../version.js';
import { relayDeadLetters } from './dead-letters.js';
import { relayDrain } from './drain.js';
import { StateDirBusyError } from './pid-lock.js';
import { nodeLog, runRelayStart, StartUsageError, type StartDefaults } from './start.js';
import { relayStatus } from './status.js';
import { unitPath } from './unit-path.js';

const STATE_DIR = process.env.EDGEMAIL_RELAY_STATE_DIR || '/var/lib/edgemail-relay';
const DEFAULTS: StartDefaults = { stateDir: STATE_DIR, inboundPort: 25, submissionPort: 587, submissionTlsPort: 465, logFormat: 'json' };

const USAGE = `usage: edgemail-relay <command> [flags]

  enroll --edge <url> [--key <myk_ key>]    enrol this machine with a project key holding relay:write
        [--name <n>] [--force]               (or EDGEMAIL_RELAY_KEY); prints the node id and writes
                                             <state-dir>/node.json (0600); --force replaces an enrolment
  start [--port <n>] [--host <addr>]         run the node in the foreground (the systemd unit runs this);
        [--tls-port <n>]                     inbound (MX) on 25 (EDGEMAIL_INBOUND_PORT), host 0.0.0.0;
        [--submission-port <n|off>]          submission on 587 (EDGEMAIL_SUBMISSION_PORT) and implicit TLS
        [--submission-tls-port <n|off>]      on 465 while submission.tls.enabled; SIGTERM drains
        [--verbose]
  status                                     the node, its spool and dead letters, and whether it runs
  dead-letters                               the messages the edge refused for good (<spool>/dead/)
  drain [--timeout <seconds>]                forward the spool to the edge with no listener open; exits 0
                                             once it is empty (stop the node first); default 300 s
  unit-path                                  the path of the systemd unit shipped with the package
  --version                                  the node's version

Every command takes --state-dir <dir> (else EDGEMAIL_RELAY_STATE_DIR, else /var/lib/edgemail-relay).
Settings come from SERVICE_* variables (docs/config.md); a bad one stops with exit 2.`;

class UsageError extends Error {}

async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'V' },
      edge: { type: 'string' },
      key: { type: 'string' },
      name: { type: 'string' },
      force: { type: 'boolean' },
      'state-dir': { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'tls-port': { type: 'string' },
      'submission-port': { type: 'string' },
      'submission-tls-port': { type: 'string' },
      verbose: { type: 'boolean' },
      timeout: { type: 'string' },
    },
  });
  if (values.version) {
    console.log(NODE_VERSION);
    return 0;
  }
  const command = positionals.join(' ');
  if (values.help || !command || command === 'help') {
    console.log(USAGE);
    return 0;
  }
  const stateDir = values['state-dir'] ?? STATE_DIR;
  switch (command) {
    case 'unit-path':
      console.log(unitPath());
      return 0;
    case 'dead-letters':
      await relayDeadLetters(stateDir);
      return 0;
  }
  const { config, removedInUse } = loadConfig(process.env);
  if (removedInUse.length) console.error(`edgemail-relay: removed settings are set and ignored: ${removedInUse.join(', ')}`);
  switch (command) {
    case 'enroll': {
      if (!values.edge) throw new UsageError('--edge <url> is required');
      const key = values.key ?? process.env.EDGEMAIL_RELAY_KEY;
      if (!key) throw new UsageError('--key <myk_ key holding relay:write> (or EDGEMAIL_RELAY_KEY) is required');
      const state = await enrollNode({ edgeUrl: values.edge, key, name: values.name, stateDir, force: values.force });
      // The id alone on stdout, so it can be captured: NODE=$(edgemail-relay enroll …)
      console.log(state.node_id);
      console.error(`relay node "${state.name}" enrolled at ${state.edge_url}; credential written to ${stateDir}/node.json (mode 0600)`);
      return 0;
    }
    case 'start':
      return runRelayStart(values, config, DEFAULTS);
    case 'status':
      await relayStatus(stateDir, config);
      return 0;
    case 'drain': {
      const seconds = values.timeout === undefined ? 300 : Number(values.timeout);
      if (!Number.isFinite(seconds) || seconds <= 0) throw new UsageError(`--timeout must be a number of seconds above 0, got ${values.timeout}`);
      return relayDrain(stateDir, config, nodeLog(config, DEFAULTS), seconds * 1000);
    }
    default:
      throw new UsageError(`unknown command: ${command}`);
  }
}

run(process.argv.slice(2)).then(
  // Exit with the node's own code: idle keep-alive sockets must not hold the process.
  (code) => process.exit(code),
  (e: unknown) => {
    if (e instanceof UsageError || e instanceof StartUsageError || e instanceof ConfigError || (e as Error)?.name === 'TypeError' && (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`edgemail-relay: ${(e as Error).message}\n\n${USAGE}`);
      process.exit(2);
    }
    // The library's message names the checkout's command.
    if ((e as Error)?.name === 'NotEnrolledError') {
      const dir = (e as Error & { stateDir: string }).stateDir;
      console.error(`edgemail-relay: no relay node is enrolled in ${dir}: run \`EDGEMAIL_RELAY_KEY=myk_… edgemail-relay enroll --edge <url> --state-dir ${dir}\` first`);
      process.exit(1);
    }
    console.error(`edgemail-relay: ${(e as Error).message}`);
    process.exit(e instanceof StateDirBusyError ? 1 : isFatalEdgeError(e) ? 3 : 1);
  },
);
