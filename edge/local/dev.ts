// `pnpm dev`: the whole local stack in the foreground (dev-run.ts); Ctrl-C stops it all.
//
// Ctrl-C works from the first second: the handler is installed here, before
// the stack's modules load (wrangler alone takes a second or two), and stays
// the only one. Importing wrangler registers SIGINT/SIGTERM handlers that exit
// at once, and starting a Worker adds more; they would skip our stop (the
// relay node's session drain, the Worker's disposal, PostgreSQL's clean
// shutdown), so any handler added later is removed.

import { resolve } from 'node:path';
import { devPortList, takenPort } from './port-check.js';
import { localDataDir } from './pg-credentials.js';
import { readStackPids } from './stack-processes.js';

/** What Ctrl-C does now: until the stack starts, nothing is running, so it just stops. */
let stop = (): void => {
  console.log('\nstopping…');
  process.exit(0);
};
const onSignal = () => stop();
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
process.on('newListener', (event, listener) => {
  if ((event === 'SIGINT' || event === 'SIGTERM') && listener !== onSignal) setImmediate(() => process.removeListener(event, listener));
});
// Those registered before this module ran (by a loader), too.
for (const event of ['SIGINT', 'SIGTERM'] as const) {
  for (const listener of process.listeners(event)) if (listener !== onSignal) process.removeListener(event, listener);
}

// A taken port is named within a second, before the stack's modules load (~2 s, far more on a busy
// machine). Unless a crashed run left processes on this data directory: dev-run.ts ends those first,
// then checks again.
const taken = await takenPort(devPortList(process.env));
if (taken && !readStackPids(resolve(localDataDir()))) {
  console.error(`edgemail: ${taken.message}`);
  process.exit(1);
}

import('./dev-run.js')
  .then(({ main }) => main((next) => { stop = next; }))
  .catch((e) => {
    console.error(e);
    process.exit(1);
  });
