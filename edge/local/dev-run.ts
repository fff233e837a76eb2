// `pnpm dev` (started by dev.ts): the whole local stack in the foreground;
// Ctrl-C stops it all. Data lives in `.data/`, so a second start reuses it.
import { resolve } from 'node:path';
import { ConfigError, loadConfig } from '@edgemail/shared';
import { credentialsFile, localDataDir } from './pg-credentials.js';
import { ENCRYPTION_KEY_ENV, encryptionKeyFile, localEncryptionKey } from './encryption-key.js';
import { serviceSettings, StartAborted, startStack, type Stack } from './stack.js';
import { devPortList, devPorts, isAddressInUse, takenPort, type StackPort } from './port-check.js';
import { writeStackRecord } from './stack-record.js';
import { quietRelayChatter } from './quiet-logs.js';
import { endStaleProcesses, startWatchdog } from './watchdog.js';
import { ensureConsoleBuilt } from './console-build.js';
import { watchConsole, type ConsoleWatch } from './console-watch.js';

/**
 * The stack in the foreground, once dev.ts has installed the Ctrl-C handler:
 * `setStop` makes `stop` what Ctrl-C (SIGINT, SIGTERM) does from now on.
 */
export async function main(setStop: (stop: () => void) => void) {
  let stack: Stack | undefined;
  let consoleWatch: ConsoleWatch | undefined;
  let stopping = false;
  const abort = new AbortController();
  const stop = () => {
    // pnpm passes the terminal's Ctrl-C on to us as well: one press arrives twice.
    if (stopping) return;
    stopping = true;
    console.log('\nstopping…');
    abort.abort();
    consoleWatch?.close();
    if (stack) {
      void stack.stop().then(() => process.exit(0));
      return;
    }
    // Mid-start, the start itself stops what it started (StartAborted, below), once its current step
    // ends; a step that never does (a child lost to the same Ctrl-C) is left to the watchdog.
    setTimeout(() => process.exit(130), 20_000).unref();
  };
  setStop(stop);

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
  const ports = devPorts(process.env);
  const localDns = !settings.SERVICE_DNS_DOH_URL;
  const { config } = loadConfig(settings);
  const checked: StackPort[] = [
    ...devPortList(process.env),
    // The relay node's http-01 responder, when ACME is on (it binds the node's host too).
    ...(config['acme.enabled'] ? [{ port: config['acme.http_port'], setting: 'SERVICE_ACME_HTTP_PORT' }] : []),
  ];
  // Every port before anything starts (dev.ts checked most already, before loading this): a taken one is named at once.
  const taken = await takenPort(checked);
  if (taken) {
    console.error(`edgemail: ${taken.message}`);
    process.exit(1);
  }
  // Our children (PostgreSQL, workerd) end with us, however we end: a SIGKILL included.
  startWatchdog(dataDir);
  // The web console the Worker serves (wrangler.toml [assets]): built now when missing or older than its sources.
  ensureConsoleBuilt({ log: (line) => console.log(`[console] ${line}`) });
  // Sealing needs a key the next start still has: made once into .data/, unless one is given.
  settings[ENCRYPTION_KEY_ENV] ||= localEncryptionKey(encryptionKeyFile(dataDir));
  try {
    stack = await startStack({
      dataDir,
      pgPort: ports.pgPort,
      bridgePort: ports.bridgePort,
      workerPort: ports.workerPort,
      settings,
      log: (line) => console.log(`[stack] ${line}`),
      logLevel: 'info',
      // Loopback only: a developer's MX is for local SMTP clients (swaks, smtplib).
      relay: { port: ports.inboundPort, submissionPort: ports.submissionPort, host: '127.0.0.1', stateDir: `${dataDir}/relay-node` },
      localDns,
      dnsPort: ports.dnsPort,
      signal: abort.signal,
    });
  } catch (e) {
    // What had started is stopped already (startStack unwinds before it throws).
    if (e instanceof StartAborted || stopping) process.exit(0);
    // Taken between the check and the bind: the same one line, found again now that ours are closed.
    const late = isAddressInUse(e) ? await takenPort(checked) : null;
    if (late) {
      console.error(`edgemail: ${late.message}`);
      process.exit(1);
    }
    throw e;
  }
  if (stopping) {
    // Ctrl-C as the last step finished.
    await stack.stop();
    process.exit(0);
  }
  // Each saved change to console/ rebuilds it; the Worker serves the new build (reload the page).
  consoleWatch = watchConsole((line) => console.log(`[console] ${line}`));
  // The operator binary reads the ports from here (`pnpm edgemail ...` without EDGEMAIL_PG_PORT).
  writeStackRecord(dataDir, { ...ports, pid: process.pid, startedAt: new Date().toISOString() });
  // The password stays in its 0600 file, out of terminal scrollback and logs.
  const shown = new URL(stack.databaseUrl);
  shown.password = '***';
  console.log(`edgemail edge ready on ${stack.url}  (database ${shown}, password in ${credentialsFile(`${dataDir}/pg`)}); relay node inbound SMTP on 127.0.0.1:${stack.relay!.port}, submission on 127.0.0.1:${stack.relay!.submissionPort}`);
  void stack.relay!.closed.then((reason) => {
    if (reason) console.error(`[relay] the relay node stopped: ${reason.message}; restart pnpm dev to enrol it again`);
  });
  console.log(`The web console: ${stack.url}/ (docs/console-ui.md)`);
  console.log('Mint an admin credential: pnpm edgemail admin create-credential --name ops');
}
