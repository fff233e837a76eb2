// A port nobody listens on now, on 127.0.0.1: for the local stack's parts,
// the tests and the benchmarks alike.
import { createServer } from 'node:net';

/**
 * Ports this process has handed out. A port is free only until its taker
 * binds it, so two calls made before either binds could get the same one
 * (seen: PostgreSQL's port handed out again as the local DNS's); never twice here.
 */
const handedOut = new Set<number>();

export async function freePort(): Promise<number> {
  for (;;) {
    const port = await unusedPort();
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
}

async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
