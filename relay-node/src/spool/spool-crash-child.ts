// Test fixture, run as its own process by open-spool.test.ts: spools one
// message, prints "250 <id>" (what the SMTP layer would answer), then starts a
// second, endless write so that SIGKILL lands in the middle of it.
import { setTimeout as sleep } from 'node:timers/promises';
import { openSpool } from './open-spool.js';

const [dir, sizeText, layout = 'pair'] = process.argv.slice(2);
if (!dir || !sizeText) throw new Error('usage: spool-crash-child <dir> <body bytes> [pair|single]');
const size = Number(sizeText);

const spool = await openSpool(dir, { layout: layout === 'single' ? 'single' : 'pair' });
const { id } = await spool.write(patternChunks(size), { mailFrom: 'a@example.test', rcptTo: ['b@example.test'], clientIp: '203.0.113.7' });
process.stdout.write(`250 ${id}\n`);

await spool.write(
  (async function* endless() {
    for (;;) {
      yield Buffer.alloc(16 * 1024, 0x78);
      await sleep(2);
    }
  })(),
  { second: true },
);

/** `size` bytes of a pattern the test can check byte for byte. */
function* patternChunks(total: number): Generator<Buffer> {
  for (let offset = 0; offset < total; offset += 65536) {
    const n = Math.min(65536, total - offset);
    const chunk = Buffer.alloc(n);
    for (let i = 0; i < n; i++) chunk[i] = (offset + i) % 251;
    yield chunk;
  }
}
