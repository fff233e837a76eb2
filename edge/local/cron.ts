// wrangler's local runtime does not fire cron triggers by itself: this runs
// the Worker's `[triggers] crons` from wrangler.toml on the minute, through
// the Worker's local trigger (EdgeWorker.scheduled), so the local stack sweeps
// the webhook outbox and purges old audit events as production does.
import { readFileSync } from 'node:fs';
import { repoRoot } from './edge-worker.js';

/** The cron expressions of wrangler.toml. Only minute fields are read: `*` or a number, the rest `* * * *`. */
export function wranglerCrons(toml = readFileSync(`${repoRoot}wrangler.toml`, 'utf8')): string[] {
  const list = /^crons\s*=\s*\[([^\]]*)\]/m.exec(toml)?.[1] ?? '';
  return [...list.matchAll(/"([^"]+)"/g)].map((m) => m[1]!);
}

/** Whether `cron` fires at this minute (minute field `*` or a number; every other field `*`). */
export function firesAt(cron: string, at: Date): boolean {
  const [minute, ...rest] = cron.trim().split(/\s+/);
  if (rest.length !== 4 || rest.some((f) => f !== '*')) throw new Error(`local cron runner: unsupported expression "${cron}"`);
  return minute === '*' || Number(minute) === at.getUTCMinutes();
}

/**
 * Fires the crons due each minute until stopped. A failed run is logged, not fatal.
 * @example const cron = startLocalCron((c) => worker.scheduled(c), log); … cron.stop();
 */
export function startLocalCron(run: (cron: string) => Promise<number>, log: (line: string) => void): { stop(): void } {
  const crons = wranglerCrons();
  for (const c of crons) firesAt(c, new Date()); // refuse an unsupported expression at start-up
  let timer: NodeJS.Timeout;
  let lastMinute = -1;
  const tick = () => {
    const now = new Date();
    // A timer may fire a few ms early, still in the minute already run: never run one twice.
    const minute = Math.floor(now.getTime() / 60_000);
    if (minute !== lastMinute) {
      lastMinute = minute;
      for (const cron of crons.filter((c) => firesAt(c, now))) {
        run(cron)
          .then((status) => { if (status !== 200) log(`cron "${cron}": the Worker answered ${status}`); })
          .catch((e: unknown) => log(`cron "${cron}" failed: ${e instanceof Error ? e.message : String(e)}`));
      }
    }
    schedule();
  };
  const schedule = () => {
    timer = setTimeout(tick, 60_000 - (Date.now() % 60_000) + 50);
    timer.unref();
  };
  schedule();
  return { stop: () => clearTimeout(timer) };
}
