// `pnpm dev` keeps console/dist current while it runs: a saved change under
// console/ rebuilds it (about a second) and the running Worker serves the new
// files (reload the page). Wrangler restarts the Worker on every write to
// console/dist, and a request in flight then gets a 503 ("Your worker
// restarted mid-request"), so only files whose bytes changed are written and
// nothing is written at start: `vite build --watch`, used before, rewrote
// every file as `pnpm dev` came up and once cost the relay node a claim.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { consoleDir, consoleDist, consoleSources, STAMP, viteBin } from './console-build.js';

/** Saves arrive as bursts of events (editors write, rename, chmod): one build per burst. */
const SETTLE_MS = 150;

export interface ConsoleWatch {
  close(): void;
}

export function watchConsole(log: (line: string) => void): ConsoleWatch {
  let timer: NodeJS.Timeout | undefined;
  let build: ChildProcess | undefined;
  let again = false;
  let closed = false;
  const tmp = `${consoleDist}.watch-${process.pid}`;

  const rebuild = () => {
    if (build) {
      again = true;
      return;
    }
    rmSync(tmp, { recursive: true, force: true });
    const started = Date.now();
    const child = spawn(process.execPath, [viteBin(), 'build', '--logLevel', 'warn', '--outDir', tmp], { cwd: consoleDir, stdio: ['ignore', 'pipe', 'pipe'] });
    const forward = (chunk: Buffer) => {
      for (const line of String(chunk).split('\n')) if (line.trim()) log(line);
    };
    child.stdout?.on('data', forward);
    child.stderr?.on('data', forward);
    build = child;
    child.on('close', (code) => {
      build = undefined;
      if (!closed) {
        if (code === 0) {
          const changed = syncInto(tmp, consoleDist);
          log(changed === 0 ? 'rebuilt: nothing changed' : `rebuilt in ${Date.now() - started} ms: ${changed} file(s) changed; reload the page`);
        } else {
          log(`the build failed (exit ${code}): still serving the previous one`);
        }
      }
      rmSync(tmp, { recursive: true, force: true });
      if (again && !closed) {
        again = false;
        rebuild();
      }
    });
  };
  const changed = () => {
    clearTimeout(timer);
    timer = setTimeout(rebuild, SETTLE_MS);
  };

  // Folders recursively; the console folder itself only for its top-level files (recursively it would walk node_modules).
  const folders = ['src', 'public'];
  const topFiles = new Set(consoleSources.filter((name) => !folders.includes(name)));
  const watchers: FSWatcher[] = [
    watch(consoleDir, (_event, name) => {
      if (name && topFiles.has(name)) changed();
    }),
    ...folders.map((folder) => watch(join(consoleDir, folder), { recursive: true }, changed)),
  ];

  return {
    close() {
      closed = true;
      clearTimeout(timer);
      for (const w of watchers) w.close();
      build?.kill();
    },
  };
}

/**
 * Makes `to` hold exactly the files of `from`, writing only those whose bytes
 * differ and removing those no longer built; the stamp (a fresh build, for the
 * next start) is written only when something changed. Returns the number of
 * files written or removed.
 */
function syncInto(from: string, to: string): number {
  const built = listFiles(from);
  let changed = 0;
  for (const file of built) {
    const bytes = readFileSync(join(from, file));
    let current: Buffer | undefined;
    try {
      current = readFileSync(join(to, file));
    } catch {
      current = undefined;
    }
    if (current?.equals(bytes)) continue;
    mkdirSync(dirname(join(to, file)), { recursive: true });
    writeFileSync(join(to, file), bytes);
    changed += 1;
  }
  const keep = new Set([...built, STAMP]);
  for (const file of listFiles(to)) {
    if (keep.has(file)) continue;
    rmSync(join(to, file), { force: true });
    changed += 1;
  }
  if (changed > 0) writeFileSync(join(to, STAMP), '');
  return changed;
}

function listFiles(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath ?? entry.path, entry.name)));
}
