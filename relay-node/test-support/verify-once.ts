// Verifies one message through the real verification pool and prints its
// verdicts as JSON: run as `node --import tsx relay-node/test-support/verify-once.ts`
// to see that the worker thread starts the way `pnpm edgemail relay start` runs.
import { Readable } from 'node:stream';
import { createAuthenticator } from '../src/inbound/mail-auth/authenticate.js';
import { createVerifyPool } from '../src/inbound/mail-auth/verify-pool.js';

const pool = createVerifyPool();
// No DNS at all: every name is unknown, so a verdict can only come from a worker that ran mailauth.
const nowhere = async () => {
  throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
};
const authenticate = createAuthenticator({ resolver: nowhere, mta: 'mx.once.test', pool, deadlineMs: 20_000 });
const message = 'DKIM-Signature: v=1; a=rsa-sha256; d=junk.test; s=sel; h=from; bh=AA; b=AA\r\nFrom: a@sender.test\r\nSubject: once\r\n\r\nHello.\r\n';
const verdicts = await authenticate(Readable.from([Buffer.from(message)]), { ip: '192.0.2.1', helo: 'client.test', sender: 'a@sender.test' });
process.stdout.write(`${JSON.stringify(verdicts)}\n`);
await pool.close();
