// `pnpm bench console`: the console API. Each half is a file of its own under
// bench/console/ (sign-in: sign-ins/s and the password hash's CPU; stream: the event
// stream's commit → browser latency against webhook delivery), run on one stack.
import { numberFlags } from './args.js';
import { startRun, finishRun } from './support/results.js';
import { withStack } from './support/stack.js';
import { runSignInBench, signInDefaults, signInSettings } from './console/sign-in.js';
import { runStreamBench, streamDefaults, streamSettings } from './console/stream.js';

export async function runConsoleBench(argv: string[]): Promise<void> {
  const flags = numberFlags(argv, { ...signInDefaults, ...streamDefaults });
  const clock = startRun();
  const figures = await withStack({ ...signInSettings, ...streamSettings }, async (stack) => ({
    signIn: await runSignInBench(stack, flags),
    stream: await runStreamBench(stack, flags),
  }));
  finishRun('console', clock, { options: flags, ...figures });
}
