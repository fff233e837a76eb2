// `pnpm dev`: the whole local stack in the foreground; Ctrl-C stops it all.
// Data lives in `.data/`, so a second start reuses it.
import { ConfigError } from '@edgemail/shared';
import { repoRoot } from './edge-worker.js';
import { serviceSettings, startStack } from './stack.js';

const port = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

async function main() {
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
  const stack = await startStack({
    dataDir: process.env.EDGEMAIL_DATA_DIR ?? `${repoRoot}.data`,
    pgPort: port('EDGEMAIL_PG_PORT', 54329),
    bridgePort: port('EDGEMAIL_BRIDGE_PORT', 54330),
    workerPort: port('EDGEMAIL_PORT', 8787),
    settings,
    log: (line) => console.log(`[stack] ${line}`),
    logLevel: 'info',
  });
  console.log(`edgemail edge ready on ${stack.url}  (database ${stack.databaseUrl})`);
  console.log('Mint an admin credential: pnpm edgemail admin create-credential --name ops');

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    console.log('\nstopping…');
    await stack.stop();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
