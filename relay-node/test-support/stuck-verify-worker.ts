// A stand-in verification worker for pool tests: it speaks the pool's protocol
// (verify-protocol.ts) and answers fixed verdicts, except for a message whose
// HELO is `spin`: once that message has ended it runs the CPU forever, as a
// verifier stuck in a computation would, and can no longer answer anything.
import { parentPort } from 'node:worker_threads';
import type { AuthContext } from '../src/inbound/mail-auth/verdicts.js';
import type { FromWorker, ToWorker } from '../src/inbound/mail-auth/verify-protocol.js';

const port = parentPort!;
const post = (message: FromWorker) => port.postMessage(message);
const contexts = new Map<number, AuthContext>();

port.on('message', (message: ToWorker) => {
  if (message.type === 'abort') post({ type: 'aborted', job: message.job });
  if (message.type !== 'data') return;
  if (message.start) contexts.set(message.job, message.start.context);
  if (!message.end) return post({ type: 'ack', job: message.job, bytes: message.data?.byteLength ?? 0 });
  const context = contexts.get(message.job)!;
  if (context.helo === 'spin') for (;;);
  const auth = { spf: 'none', dkim: 'none', dmarc: 'none', aligned: false, client_ip: context.ip };
  post({ type: 'done', job: message.job, result: { auth, dmarcPolicy: null, dmarcReject: false, headers: 'Authentication-Results: stand-in; none\r\n' } });
});
post({ type: 'ready' });
