// A stand-in compose worker for pool tests: the real one (compose-worker.ts),
// except that a job whose subject is `crash-once:<file>` takes the thread down
// (process.exit in a worker ends that thread, as a native crash or an
// out-of-memory abort would) the first time it is seen, marking `<file>` so
// that the worker composing it next does not; `crash-always` takes down every
// worker it reaches.
import { existsSync, writeFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import type { ToComposeWorker } from '../src/outbound/compose-protocol.js';

// The real worker first: a message that came while this module loaded goes to
// the listeners there are when the first is added. Its composing is
// asynchronous, so the exit below comes before any answer for the job.
await import('../src/outbound/compose-worker.js');

parentPort!.on('message', (message: ToComposeWorker) => {
  const subject = message.job.message.subject;
  if (subject === 'crash-always') process.exit(70);
  const once = /^crash-once:(.+)$/.exec(subject);
  if (once && !existsSync(once[1]!)) {
    writeFileSync(once[1]!, 'crashed');
    process.exit(70);
  }
});
