// The sign-in half of `pnpm bench console`: password sign-ins per second
// through the real stack against GET /health in the same run, and the CPU one
// verify of the stored hash costs: in Node (process.cpuUsage) and in workerd
// (the Worker process's CPU from /proc, a full-cost attempt minus a cheap-cost
// one, so only the hash remains), printed with the Workers limit it fits.
import { eq } from 'drizzle-orm';
import { users } from '@edgemail/schema';
import type { Stack } from '../../edge/local/stack.js';
import { withDatabase } from '../../edge/local/with-database.js';
import { hashPassword, PASSWORD_COST, verifyPassword, type ScryptCost } from '../../edge/src/services/console/password.js';
import { descendantsCpuMs } from '../support/process-cpu.js';
import { bootstrap } from '../support/stack.js';

export const signInDefaults = { 'sign-in-seconds': 10, 'sign-in-connections': 2, verifies: 10 };
export type SignInFlags = typeof signInDefaults;

const PASSWORD = 'bench: correct horse battery staple';
const CHEAP: ScryptCost = { N: 1024, r: 8, p: 1 };
/** Workers' CPU time per request: the free plan's limit, and the paid plan's default (it can be raised to 5 min). */
const LIMITS = [{ plan: 'Workers Free', ms: 10 }, { plan: 'Workers Paid (default)', ms: 30_000 }];

const fitsUnder = (ms: number) => LIMITS.find((l) => ms <= l.ms)?.plan ?? 'no plan\'s default limit';
const workerdCpuMs = () => descendantsCpuMs(['workerd']).workerd!;

function nodeVerifyMs(n: number): number {
  const stored = hashPassword(PASSWORD);
  verifyPassword(PASSWORD, stored); // warm the JIT
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) verifyPassword(PASSWORD, stored);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / n;
}

async function post(stack: Stack, body: unknown): Promise<number> {
  const res = await fetch(`${stack.url}/app/api/session`, { method: 'POST', headers: { 'content-type': 'application/json', origin: stack.url }, body: JSON.stringify(body) });
  await res.arrayBuffer();
  return res.status;
}

/** Requests per second of `request` from `connections` loops for `seconds`; every answer must be `expected`. */
async function rate(seconds: number, connections: number, expected: number, request: () => Promise<number>): Promise<number> {
  const end = Date.now() + seconds * 1000;
  let done = 0;
  await Promise.all(Array.from({ length: connections }, async () => {
    while (Date.now() < end) {
      const status = await request();
      if (status !== expected) throw new Error(`expected ${expected}, got ${status}`);
      done++;
    }
  }));
  return done / seconds;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * CPU of workerd per attempt, over `n` sequential wrong-password attempts
 * against a user stored at `cost`: the median of three batches (a Worker that
 * restarts mid-batch, as wrangler does when a source file changes, takes its
 * CPU time with it and spoils that batch alone).
 */
async function workerdMsPerAttempt(stack: Stack, email: string, cost: ScryptCost, n: number): Promise<number> {
  await withDatabase(stack.databaseUrl, (db) => db.update(users).set({ passwordHash: hashPassword(PASSWORD, cost), failedPasswordCount: 0, passwordLockedUntil: null }).where(eq(users.email, email)));
  await post(stack, { email, password: 'wrong' }); // warm
  const batches: number[] = [];
  for (let b = 0; b < 3; b++) {
    const before = workerdCpuMs();
    for (let i = 0; i < n; i++) await post(stack, { email, password: 'wrong' });
    batches.push((workerdCpuMs() - before) / n);
  }
  return median(batches);
}

/** The settings the stack needs for this half: the login limiter off (it would refuse the run). */
export const signInSettings = { SERVICE_RATELIMIT_LOGIN_PER_MINUTE: '0' };

export async function runSignInBench(stack: Stack, flags: SignInFlags) {
  await bootstrap(stack);
  const email = await withDatabase(stack.databaseUrl, async (db) => (await db.select({ email: users.email }).from(users).limit(1))[0]!.email);
  const cost = `scrypt N=${PASSWORD_COST.N} r=${PASSWORD_COST.r} p=${PASSWORD_COST.p} (${(128 * PASSWORD_COST.N * PASSWORD_COST.r) / 2 ** 20} MiB)`;
  console.log(`\nconsole sign-in (${cost})`);

  const node = nodeVerifyMs(flags.verifies);
  // Wrong passwords: every attempt verifies (the lockout engages after ten but still verifies, for equal timing).
  const full = await workerdMsPerAttempt(stack, email, PASSWORD_COST, flags.verifies);
  const cheap = await workerdMsPerAttempt(stack, email, CHEAP, flags.verifies);
  const workerd = full - cheap;
  console.log(`  CPU per verify: Node ${node.toFixed(0)} ms, workerd ${workerd.toFixed(0)} ms (attempt ${full.toFixed(0)} ms at today's cost, ${cheap.toFixed(0)} ms at N=1024 p=1)`);
  console.log(`  fits under: ${fitsUnder(workerd)} (free ${LIMITS[0]!.ms} ms, paid ${LIMITS[1]!.ms / 1000} s of CPU per request)`);

  // Throughput: good sign-ins (today's cost, no rehash), against /health in the same run.
  await withDatabase(stack.databaseUrl, (db) => db.update(users).set({ passwordHash: hashPassword(PASSWORD), failedPasswordCount: 0, passwordLockedUntil: null }).where(eq(users.email, email)));
  const seconds = flags['sign-in-seconds'];
  const connections = flags['sign-in-connections'];
  const health = await rate(Math.min(seconds, 5), connections, 200, async () => { const r = await fetch(`${stack.url}/health`); await r.arrayBuffer(); return r.status; });
  const signIns = await rate(seconds, connections, 200, () => post(stack, { email, password: PASSWORD }));
  console.log(`  sign-ins/s: ${signIns.toFixed(2)} with ${connections} connections (GET /health ${health.toFixed(0)}/s: sign-ins are ${((signIns / health) * 100).toFixed(2)}% of it)`);
  return { cost: PASSWORD_COST, cpuMsPerVerify: { node, workerd, workerdAttemptFull: full, workerdAttemptCheap: cheap }, fitsUnder: fitsUnder(workerd), signInsPerSecond: signIns, healthPerSecond: health, connections };
}
