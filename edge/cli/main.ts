// `edgemail`: the operator binary. Run as `pnpm edgemail <command>`.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { runMigrations } from '@edgemail/schema/migrate';
import { isUuid, ConfigError, loadConfig, renderConfigDocs } from '@edgemail/shared';
import { createPlatformCredential } from '../src/services/platform-credentials/create.js';
import { setNodeScope } from '../src/services/relay-nodes/scope.js';
import { setPlatformAdmin } from '../src/services/users/set-platform-admin.js';
import { checkReachable, databaseTarget, withCliDatabase } from './database.js';
import { runTls } from './tls.js';

const USAGE = `usage: edgemail <command>

  help, --help, -h                            print this

  migrate [--database-url <url>]             apply the committed migrations (idempotent)
  admin create-credential --name <n>          mint a platform credential; prints the mya_ token
        [--allowed-ip <ip|cidr>]... [--expires-at <rfc3339>] [--database-url <url>]
  admin grant-platform-admin --email <e>      make a user a platform admin: their console sessions may use
        [--database-url <url>]                /api/v1/admin from their next request (docs/console.md)
  admin revoke-platform-admin --email <e>     take it back; refused on the user's very next request
        [--database-url <url>]
  export-api-spec --out <file> [--surface api|app|all|relay|webhooks|tracking|unsubscribe]   (all: api and app; relay: /relay/v1; webhooks: /webhooks; tracking: /t; unsubscribe: /unsubscribe)
  config-docs [--out <file>]                  write the settings table (docs/config.md)
  routes-docs [--out <file>]                  write the route table (docs/routes.md)
  relay enroll --edge <url> --key <myk_ key>  enrol a relay node with a key holding relay:write (the key
        [--name <n>] [--state-dir <dir>]       may come from EDGEMAIL_RELAY_KEY instead); prints the node id,
        [--force]                             writes <state-dir>/node.json (0600); --force replaces an
                                              enrolment (the spool is kept)
  relay scope --node <id> --installation-wide  let a node serve every project's domains (and the shared
        [--project-only] [--database-url <url>]  certificate); --project-only narrows it back to its own project
  relay start [--state-dir <dir>]             run the relay node in the foreground (Ctrl-C stops it)
        [--port <n>] [--host <addr>]          inbound (MX) listener: EDGEMAIL_INBOUND_PORT, else 2525,
        [--tls-port <n>]                      on EDGEMAIL_INBOUND_HOST, else 0.0.0.0; optional implicit TLS port
        [--submission-port <n|off>]           submission listener (STARTTLS, AUTH with an API key as password):
        [--submission-tls-port <n>]           EDGEMAIL_SUBMISSION_PORT, else 2587 (off: none), same host;
                                              optional implicit-TLS submission port (EDGEMAIL_SUBMISSION_TLS_PORT)
        [--verbose]                           log each step of a message too (relay_node.log_level=debug)
  relay dead-letters [--state-dir <dir>]      list the messages the edge refused for good (<spool>/dead/):
                                              id, size, when moved, reason; the node need not be running
  tls status [--database-url <url>]           the SMTP listeners (inbound, submission): TLS on/off, the assigned
                                              certificate and its expiry, what each presents; then the stored
                                              certificates, flagged when expired or within 30 days of it
  tls assign --listener <l> --certificate <n> assign a stored certificate to a listener (not an authority,
        [--database-url <url>]                not expired); running relay nodes follow within their poll
  tls unassign --listener <l>                 drop a listener's assignment: it falls back to ACME, then the
        [--database-url <url>]                shared self-signed pair (docs/listeners.md)

The database defaults to SERVICE_DATABASE_URL, else the local stack's. The relay
node's state directory defaults to .data/relay-node (EDGEMAIL_DATA_DIR/relay-node).`;

class UsageError extends Error {}

/**
 * A relay command, loaded on use (it loads the relay node: a second or more
 * that the database commands need not pay); its usage errors are the binary's.
 */
async function relayCommand<T>(fn: (relay: typeof import('./relay.js')) => Promise<T>): Promise<T> {
  const relay = await import('./relay.js');
  try {
    return await fn(relay);
  } catch (e) {
    if (e instanceof relay.RelayUsageError) throw new UsageError(e.message);
    throw e;
  }
}

/** The database a command works on, checked to answer first so that a failure names the server tried. */
async function database(flag?: string): Promise<string> {
  const target = databaseTarget(flag);
  await checkReachable(target);
  return target.url;
}

async function run(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'database-url': { type: 'string' },
      name: { type: 'string' },
      email: { type: 'string' },
      'allowed-ip': { type: 'string', multiple: true },
      'expires-at': { type: 'string' },
      out: { type: 'string' },
      surface: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      edge: { type: 'string' },
      key: { type: 'string' },
      'state-dir': { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'tls-port': { type: 'string' },
      'submission-port': { type: 'string' },
      'submission-tls-port': { type: 'string' },
      node: { type: 'string' },
      'installation-wide': { type: 'boolean' },
      'project-only': { type: 'boolean' },
      force: { type: 'boolean' },
      verbose: { type: 'boolean' },
      listener: { type: 'string' },
      certificate: { type: 'string' },
    },
  });
  const command = positionals.join(' ');
  // `help` as a command too (`edgemail help`, `edgemail help tls`), as most tools take it;
  // before the settings are read, so that help works even when they are wrong.
  if (values.help || !command || positionals[0] === 'help') {
    console.log(USAGE);
    return;
  }
  // Settings given to the binary are checked like the server's, and removed
  // ones that are set are named at boot as the edge names them (`relay start` too).
  const { config, removedInUse } = loadConfig(process.env);
  if (removedInUse.length) console.warn(`edgemail: removed settings are set and ignored: ${removedInUse.join(', ')}`);
  switch (command) {
    case 'migrate': {
      await runMigrations(await database(values['database-url']));
      console.error('migrations applied');
      return;
    }
    case 'admin create-credential': {
      const name = values.name?.trim();
      if (!name) throw new UsageError('--name is required');
      const expires = values['expires-at'];
      if (expires && !(Date.parse(expires) > Date.now())) throw new UsageError('--expires-at must be a future RFC 3339 timestamp');
      const created = await withCliDatabase(await database(values['database-url']), (db) =>
        createPlatformCredential(db, { name, allowed_ips: values['allowed-ip'], expires_at: expires }));
      // The token alone on stdout, so it can be captured: TOKEN=$(pnpm -s edgemail admin create-credential --name ops)
      console.log(created.token);
      console.error(`platform credential "${name}" created (${created.credential.key_prefix}); the token is shown once`);
      return;
    }
    case 'admin grant-platform-admin':
    case 'admin revoke-platform-admin': {
      const email = values.email?.trim();
      if (!email) throw new UsageError('--email <address> is required');
      const grant = positionals[1] === 'grant-platform-admin';
      const { user, changed } = await withCliDatabase(await database(values['database-url']), (db) =>
        setPlatformAdmin(db, { email }, grant, { by: 'operator command', clientIp: null, method: 'CLI', path: `edgemail admin ${positionals[1]}` }));
      const now = grant ? 'is a platform admin' : 'is not a platform admin';
      console.error(`${user.email} ${now}${changed ? '' : ' (unchanged)'}`);
      return;
    }
    case 'export-api-spec': {
      const out = values.out;
      if (!out) throw new UsageError('--out <file> is required');
      const surface = values.surface ?? 'api';
      if (surface !== 'api' && surface !== 'app' && surface !== 'all' && surface !== 'relay' && surface !== 'webhooks' && surface !== 'tracking' && surface !== 'unsubscribe') throw new UsageError('--surface must be api, app, all, relay, webhooks, tracking or unsubscribe');
      // Loaded here, as routes-docs below: they load the whole Worker app (seconds), which no other command needs.
      const { exportApiSpec } = await import('./export-api-spec.js');
      for (const file of exportApiSpec(out, surface)) console.error(`wrote ${file}`);
      return;
    }
    case 'config-docs':
    case 'routes-docs': {
      const text = command === 'config-docs' ? renderConfigDocs() : (await import('./routes-docs.js')).renderRoutesDocs();
      if (values.out) writeFileSync(values.out, text);
      else process.stdout.write(text);
      return;
    }
    case 'relay enroll': {
      await relayCommand((relay) => relay.relayEnroll(values));
      return;
    }
    case 'relay scope': {
      const wide = values['installation-wide'] === true;
      if (!values.node || !isUuid(values.node)) throw new UsageError('--node <id> (a UUID) is required');
      if (wide === (values['project-only'] === true)) throw new UsageError('give exactly one of --installation-wide and --project-only');
      const found = await withCliDatabase(await database(values['database-url']), (db) => setNodeScope(db, values.node!, wide));
      if (!found) throw new UsageError(`no relay node ${values.node}`);
      console.error(`relay node ${values.node} now serves ${wide ? 'every project\'s domains' : 'its own project\'s domains only'}`);
      return;
    }
    case 'relay dead-letters': {
      await relayCommand(async () => (await import('./relay-dead-letters.js')).relayDeadLetters(values));
      return;
    }
    case 'tls status':
    case 'tls assign':
    case 'tls unassign': {
      const sub = positionals[1]!;
      if (sub !== 'status' && !values.listener) throw new UsageError('--listener <inbound|submission> is required');
      if (sub === 'assign' && !values.certificate) throw new UsageError('--certificate <name> is required');
      await withCliDatabase(await database(values['database-url']), (db) => runTls(sub, values, db, config));
      return;
    }
    case 'relay start': {
      // Exit with the node's own code: idle keep-alive sockets must not hold the process.
      process.exit(await relayCommand((relay) => relay.relayStart(values, config)));
    }
    default:
      throw new UsageError(`unknown command: ${command}`);
  }
}

run(process.argv.slice(2)).catch((e: unknown) => {
  if (e instanceof UsageError || e instanceof ConfigError) {
    console.error(`edgemail: ${e.message}\n\n${USAGE}`);
    process.exit(2);
  }
  console.error(`edgemail: ${(e as Error).message}`);
  process.exit(1);
});
