// `pnpm dev`: the whole local stack in the foreground; Ctrl-C stops it all.
// Data lives in `.data/`, so a second start reuses it.
import { resolve } from 'node:path';
import { ConfigError } from '@edgemail/shared';
import { credentialsFile, localDataDir } from './pg-credentials.js';
import { ENCRYPTION_KEY_ENV, encryptionKeyFile, localEncryptionKey } from './encryption-key.js';
import { serviceSettings, startStack } from './stack.js';
import { writeStackRecord } from './stack-record.js';
import { quietRelayChatter } from './quiet-logs.js';
import { endStaleProcesses, startWatchdog } from './watchdog.js';

const port = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

async function main() {
  // `pnpm dev --verbose` keeps every request line, the relay nodes' polling included.
  if (!process.argv.includes('--verbose')) quietRelayChatter();
  let settings: Record<string, string>;
  try {
    settings = serviceSettings(process.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`edgemail: ${e.message}`);
      process.exit(1);
    }
    throw e;
  }
  // `--verbose` also shows the relay node's debug lines (each step of a message): relay_node.log_level = debug.
  if (process.argv.includes('--verbose')) settings.SERVICE_RELAY_NODE_LOG_LEVEL = 'debug';
  const dataDir = resolve(localDataDir());
  // What a crashed run left on this data directory is ended first (or, a run still going, named).
  const stale = await endStaleProcesses(dataDir);
  if (stale?.fatal) {
    console.error(`edgemail: ${stale.line}`);
    process.exit(1);
  }
  if (stale) console.log(`[stack] ${stale.line}`);
  // Our children (PostgreSQL, workerd) end with us, however we end: a SIGKILL included.
  startWatchdog(dataDir);
  // Sealing needs a key the next start still has: made once into .data/, unless one is given.
  settings[ENCRYPTION_KEY_ENV] ||= localEncryptionKey(encryptionKeyFile(dataDir));
  const ports = {
    pgPort: port('EDGEMAIL_PG_PORT', 54329),
    bridgePort: port('EDGEMAIL_BRIDGE_PORT', 54330),
    workerPort: port('EDGEMAIL_PORT', 8787),
    inboundPort: port('EDGEMAIL_INBOUND_PORT', 2525),
    // Submission (docs/submission.md): STARTTLS, AUTH with a project API key; plain-text AUTH from loopback.
    submissionPort: port('EDGEMAIL_SUBMISSION_PORT', 2587),
  };
  const stack = await startStack({
    dataDir,
    pgPort: ports.pgPort,
    bridgePort: ports.bridgePort,
    workerPort: ports.workerPort,
    settings,
    log: (line) => console.log(`[stack] ${line}`),
    logLevel: 'info',
    // Loopback only: a developer's MX is for local SMTP clients (swaks, smtplib).
    relay: { port: ports.inboundPort, submissionPort: ports.submissionPort, host: '127.0.0.1', stateDir: `${dataDir}/relay-node` },
    localDns: true,
  });
  // The operator binary reads the ports from here (`pnpm edgemail ...` without EDGEMAIL_PG_PORT).
  writeStackRecord(dataDir, { ...ports, pid: process.pid, startedAt: new Date().toISOString() });
  // The password stays in its 0600 file, out of terminal scrollback and logs.
  const shown = new URL(stack.databaseUrl);
  shown.password = '***';
  console.log(`edgemail edge ready on ${stack.url}  (database ${shown}, password in ${credentialsFile(`${dataDir}/pg`)}); relay node inbound SMTP on 127.0.0.1:${stack.relay!.port}, submission on 127.0.0.1:${stack.relay!.submissionPort}`);
  void stack.relay!.closed.then((reason) => {
    if (reason) console.error(`[relay] the relay node stopped: ${reason.message}; restart pnpm dev to enrol it again`);
  });
  console.log('Mint an admin credential: pnpm edgemail admin create-credential --name ops');

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    console.log('\nstopping…');
    await stack.stop();
    process.exit(0);
  };
  // Importing wrangler registers SIGINT/SIGTERM handlers that exit at once;
  // without removing them, Ctrl-C never reaches stop() (the relay node's
  // session drain, the Worker's disposal, PostgreSQL's clean shutdown).
  process.removeAllListeners('SIGINT');
  process.removeAllListeners('SIGTERM');
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
