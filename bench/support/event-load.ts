// What the event benchmarks (webhooks, console stream) share: an inbound email
// whose retry route writes one event per call, and the open-loop writer that
// calls it at a fixed rate.
import pg from 'pg';

/** One stored inbound email whose retry route writes the events (stored directly: the benches are about what follows). */
export async function seedInboundEmail(databaseUrl: string, projectId: string, spoolId: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows: [row] } = await client.query(
      `INSERT INTO inbound_emails (project_id, spool_id, sender, recipients, subject, auth, size, status, received_at)
       VALUES ($1, $2, 'ann@example.org', '{support@bench.test}', 'Bench', $3, 100, 'received', now()) RETURNING id`,
      [projectId, spoolId, JSON.stringify({ spf: 'pass', dkim: 'pass', dmarc: 'pass', aligned: true, client_ip: '203.0.113.9' })],
    );
    return row.id as string;
  } finally {
    await client.end();
  }
}

/**
 * Open loop: `events` calls of `write`, each at its own time (`rate` a second),
 * whether or not earlier ones have answered. Resolves once all have answered,
 * with each call's duration (ms) and the wall-clock time of the first.
 */
export async function writeOpenLoop(events: number, rate: number, write: () => Promise<unknown>): Promise<{ writes: number[]; firstAt: number }> {
  const writes: number[] = [];
  const pending: Promise<void>[] = [];
  const began = performance.now();
  const firstAt = Date.now();
  for (let i = 0; i < events; i++) {
    const wait = began + (i * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    pending.push((async () => {
      const t0 = performance.now();
      await write();
      writes.push(performance.now() - t0);
    })());
  }
  await Promise.all(pending);
  return { writes, firstAt };
}
