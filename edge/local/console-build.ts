// The web console's production build (console/, docs/console-ui.md), which
// wrangler.toml's [assets] serves from console/dist. `pnpm dev` and the tests
// build it when it is missing or older than its sources (a fresh clone has
// none); `pnpm dev` then keeps it current while it runs (console-watch.ts).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const consoleDir = fileURLToPath(new URL('../../console', import.meta.url));
export const consoleDist = join(consoleDir, 'dist');
/** Written last by a finished build: its mtime is the build's. */
export const STAMP = '.built';
export const viteBin = () => join(consoleDir, 'node_modules/vite/bin/vite.js');

/** What a build reads, relative to console/. */
export const consoleSources = ['index.html', 'vite.config.ts', 'package.json', 'src', 'public'];

/** The newest modification time among the console's sources. */
function newestSource(): number {
  let newest = 0;
  const visit = (path: string) => {
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isDirectory()) {
      for (const entry of readdirSync(path)) if (entry !== 'node_modules' && entry !== 'dist') visit(join(path, entry));
    } else newest = Math.max(newest, st.mtimeMs);
  };
  for (const name of consoleSources) visit(join(consoleDir, name));
  return newest;
}

/** Whether console/dist holds a finished build at least as new as every source. */
export function consoleBuildFresh(): boolean {
  const stamp = statSync(join(consoleDist, STAMP), { throwIfNoEntry: false });
  return !!stamp && existsSync(join(consoleDist, 'index.html')) && stamp.mtimeMs >= newestSource();
}

/**
 * Builds the console into console/dist unless a fresh build is there (about a
 * second). The build goes to a folder of its own and is then moved into
 * place, so a Worker starting meanwhile (another test process) never finds
 * a half-written or missing folder for long.
 */
export function ensureConsoleBuilt(opts: { force?: boolean; log?: (line: string) => void } = {}): void {
  if (!opts.force && consoleBuildFresh()) return;
  const tmp = `${consoleDist}.build-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  const started = Date.now();
  const result = spawnSync(process.execPath, [viteBin(), 'build', '--logLevel', 'warn', '--outDir', tmp], { cwd: consoleDir, stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    const failed = `the console's build failed (exit ${result.status ?? result.signal}): see the lines above`;
    // With an older build in place the Worker still starts (tests of the API need no page); without one, stop.
    if (!opts.force && existsSync(join(consoleDist, 'index.html'))) {
      console.warn(`${failed}; serving the previous build in console/dist`);
      return;
    }
    throw new Error(failed);
  }
  writeFileSync(join(tmp, STAMP), '');
  const old = `${consoleDist}.old-${process.pid}`;
  try {
    if (existsSync(consoleDist)) renameSync(consoleDist, old);
    renameSync(tmp, consoleDist);
  } catch (e) {
    // Another process put its build in place meanwhile: that one serves as well.
    if (!existsSync(join(consoleDist, 'index.html'))) throw e;
  } finally {
    rmSync(old, { recursive: true, force: true });
    rmSync(tmp, { recursive: true, force: true });
  }
  opts.log?.(`console built in ${Date.now() - started} ms`);
}

/** Builds the console only when there is no build at all: every Worker start needs the folder (wrangler.toml [assets]). */
export function ensureConsoleExists(): void {
  if (!existsSync(join(consoleDist, 'index.html'))) ensureConsoleBuilt();
}
