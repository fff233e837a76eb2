import { createServer } from 'node:net';
import { expect, test } from 'vitest';
import { freePort } from './free-port.js';
import { takenPort } from './port-check.js';

test('two settings naming one port are refused before anything is probed, naming both', async () => {
  const port = await freePort();
  const taken = await takenPort([
    { port, setting: 'EDGEMAIL_PG_PORT' }, { port: await freePort(), setting: 'EDGEMAIL_PORT' }, { port, setting: 'EDGEMAIL_DNS_PORT', udp: true },
  ]);
  expect(taken?.message).toBe(`port ${port} is set for both EDGEMAIL_PG_PORT and EDGEMAIL_DNS_PORT: give each its own port`);
});

test('a held port is named with its setting and holder; free ones and 0 (chosen later) pass', async () => {
  const server = createServer();
  const held = await freePort();
  await new Promise<void>((resolve) => server.listen(held, '127.0.0.1', () => resolve()));
  try {
    expect(await takenPort([{ port: 0, setting: 'EDGEMAIL_SUBMISSION_PORT' }, { port: await freePort(), setting: 'EDGEMAIL_PORT' }])).toBeNull();
    const taken = await takenPort([{ port: held, setting: 'EDGEMAIL_INBOUND_PORT' }]);
    expect(taken?.message).toMatch(new RegExp(`^port ${held} \\(EDGEMAIL_INBOUND_PORT\\) is in use( by pid ${process.pid} \\([^)]+\\))?: stop it or set EDGEMAIL_INBOUND_PORT to another port$`));
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
