// `pnpm bench console-ui`: the web console's production bundle (issue 27).
// Builds console/ into a folder of its own (the served console/dist stays as
// it is) and reports what a first visit downloads: the JavaScript and CSS
// index.html names (its <script src> and modulepreload links), gzipped at
// level 9 as a CDN serves them, against the goal of 150 kB of initial JS.
// Then, in Chromium on a stack of its own (bench/console/mail-log.ts): sign-in
// → interactive email log in a project of 10,000 emails, and send → row in
// the open log (`--no-browser 1` leaves them out).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { numberFlags } from './args.js';
import { withStack } from './support/stack.js';
import { mailLogDefaults, mailLogSettings, runMailLogBench } from './console/mail-log.js';

const consoleDir = join(import.meta.dirname, '../console');
const GOAL_KB = 150;

export async function runConsoleUiBench(argv: string[]): Promise<void> {
  const flags = numberFlags(argv, { ...mailLogDefaults, 'no-browser': 0 });
  const out = mkdtempSync(join(tmpdir(), 'edgemail-console-bench-'));
  try {
    const started = Date.now();
    const build = spawnSync(process.execPath, [join(consoleDir, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn', '--outDir', out], { cwd: consoleDir, stdio: 'inherit' });
    if (build.status !== 0) throw new Error(`the console's build failed (exit ${build.status})`);
    const buildMs = Date.now() - started;
    const html = readFileSync(join(out, 'index.html'), 'utf8');
    const initialJs = [...html.matchAll(/<script[^>]*\ssrc="([^"]+)"|<link[^>]*rel="modulepreload"[^>]*href="([^"]+)"/g)].map((m) => (m[1] ?? m[2])!);
    const css = [...html.matchAll(/<link[^>]*rel="stylesheet"[^>]*href="([^"]+)"/g)].map((m) => m[1]!);
    const size = (path: string) => {
      const bytes = readFileSync(join(out, path.replace(/^\//, '')));
      return { raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
    };
    const sum = (paths: string[]) => paths.map(size).reduce((a, b) => ({ raw: a.raw + b.raw, gzip: a.gzip + b.gzip }), { raw: 0, gzip: 0 });
    const allJs = readdirSync(join(out, 'assets')).filter((f) => f.endsWith('.js')).map((f) => `/assets/${f}`);
    const first = sum(initialJs);
    const lazy = sum(allJs.filter((f) => !initialJs.includes(f)));
    const styles = sum(css);
    const kb = (n: number) => `${(n / 1000).toFixed(1)} kB`;
    console.log(`console-ui: production build in ${buildMs} ms (vite ${JSON.parse(readFileSync(join(consoleDir, 'node_modules/vite/package.json'), 'utf8')).version})`);
    console.log('');
    console.log('| what | files | raw | gzip | goal |');
    console.log('|---|---:|---:|---:|---|');
    console.log(`| initial JS (index.html's scripts and modulepreloads) | ${initialJs.length} | ${kb(first.raw)} | **${kb(first.gzip)}** | ≤ ${GOAL_KB} kB gzip: ${first.gzip <= GOAL_KB * 1000 ? 'met' : 'MISSED'} |`);
    console.log(`| JS loaded later (lazy pages) | ${allJs.length - initialJs.length} | ${kb(lazy.raw)} | ${kb(lazy.gzip)} | |`);
    console.log(`| CSS | ${css.length} | ${kb(styles.raw)} | ${kb(styles.gzip)} | |`);
    if (first.gzip > GOAL_KB * 1000) process.exitCode = 1;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  if (flags['no-browser']) return;
  const log = await withStack(mailLogSettings, (stack) => runMailLogBench(stack, flags));
  console.log('');
  console.log('| in Chromium | p50 | p99 / max | goal |');
  console.log('|---|---:|---:|---|');
  if ('skipped' in log.signInToLog) console.log(`| sign-in → interactive email log | skipped: ${log.signInToLog.skipped} | | |`);
  else console.log(`| sign-in → interactive email log (${log.emails} emails, first page of ${log.signInToLog.rowsDrawn}) | ${log.signInToLog.p50Ms} ms | max ${log.signInToLog.maxMs} ms | < ${log.signInToLog.goalMs} ms: ${log.signInToLog.met ? 'met' : 'MISSED'} |`);
  if ('skipped' in log.sendToRow) console.log(`| send answered → row in the open log | skipped: ${log.sendToRow.skipped} | | |`);
  else console.log(`| send answered → row in the open log (relay node reports at once; ${log.sendToRow.sends} sends) | ${log.sendToRow.p50Ms} ms | p99 ${log.sendToRow.p99Ms} ms | p99 < ${log.sendToRow.goalMs} ms: ${log.sendToRow.met ? 'met' : 'MISSED'} |`);
}
