// Once per test run: one embedded PostgreSQL with a migrated template
// database and one Neon bridge. Each test file clones the template into a
// database of its own and starts its own Worker (see stack.ts).
import { mkdirSync, rmSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import { runMigrations } from '@edgemail/schema/migrate';
import { startPostgres } from '../../edge/local/postgres.js';
import { startNeonBridge } from '../../edge/local/neon-bridge.js';
import { repoRoot } from '../../edge/local/edge-worker.js';
import { ensureConsoleBuilt } from '../../edge/local/console-build.js';
import type { PgLogin } from '../../edge/local/pg-credentials.js';
export { freePort } from '../../edge/local/free-port.js';
import { freePort } from '../../edge/local/free-port.js';

export const TEMPLATE_DATABASE = 'edgemail_template';


declare module 'vitest' {
  export interface ProvidedContext {
    pgPort: number;
    /** The application role (no superuser): the Worker's and the tests' login. */
    pgApp: PgLogin;
    /** The superuser, for creating each file's database only (test processes, never a Worker). */
    pgAdmin: PgLogin;
    bridgeUrl: string;
  }
}

export default async function setup(project: TestProject) {
  // wrangler.toml serves the console's build as the Worker's assets: every Worker start needs it (a fresh clone has none).
  ensureConsoleBuilt();
  const dataDir = `${repoRoot}.data/test-${process.pid}`;
  mkdirSync(dataDir, { recursive: true });
  const postgres = await startPostgres({ dataDir: `${dataDir}/pg`, port: await freePort() });
  // Owned and migrated by the application role, so each clone is that role's too.
  await postgres.createDatabase(TEMPLATE_DATABASE);
  await runMigrations(postgres.url(TEMPLATE_DATABASE));
  const bridge = await startNeonBridge({ pgHost: '127.0.0.1', pgPort: postgres.port });
  project.provide('pgPort', postgres.port);
  project.provide('pgApp', postgres.credentials.app);
  project.provide('pgAdmin', postgres.credentials.superuser);
  project.provide('bridgeUrl', bridge.url);
  return async () => {
    await bridge.close();
    await postgres.stop();
    rmSync(postgres.dataDir, { recursive: true, force: true }); // moved out of a private checkout, as root
    rmSync(dataDir, { recursive: true, force: true });
  };
}
