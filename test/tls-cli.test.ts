// `edgemail tls status|assign|unassign` as an operator locked out of the API
// runs them: `pnpm -s edgemail …` as a child process against a database with
// no Worker running at all. Every write moves `tls_state.generation` (the
// version running relay nodes poll); every refusal exits non-zero with one
// line naming the problem and leaves every row as it was.
import { execFile } from 'node:child_process';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from './support/stack.js';
import { insertCertificate } from './support/certificate-rows.js';
import { newEncryptionKey } from '../edge/local/encryption-key.js';

const ROOT = new URL('../', import.meta.url).pathname;

interface Run { code: number; stdout: string; stderr: string }

/**
 * `edgemail tls <args> --database-url <this file's database>`, with only `env`
 * as settings. Run as the `pnpm edgemail` script runs it (`node --import tsx
 * edge/cli/main.ts`), without pnpm's own start-up (test/cli.test.ts covers the
 * pnpm script itself).
 */
function tls(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SERVICE_')));
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'edge/cli/main.ts', 'tls', ...args, '--database-url', databaseUrl], { cwd: ROOT, env: { ...base, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

let databaseUrl: string;
let sql: pg.Pool;
const encryptionKey = newEncryptionKey();

const generation = async () => Number((await sql.query('SELECT generation FROM tls_state')).rows[0].generation);
const assignments = async () =>
  (await sql.query('SELECT lc.listener, c.name FROM listener_certificates lc JOIN certificates c ON c.id = lc.certificate_id ORDER BY 1')).rows;
/** Everything a refusal must leave as it was. */
const snapshot = async () => ({
  generation: await generation(),
  assignments: await assignments(),
  certificates: (await sql.query('SELECT id, name, kind, updated_at FROM certificates ORDER BY name')).rows,
});

beforeAll(async () => {
  databaseUrl = await createTestDatabase();
  sql = new pg.Pool({ connectionString: databaseUrl, max: 2 });
});
afterAll(async () => { await sql?.end(); });

describe('edgemail tls, the database alone', () => {
  it('status on an empty install: both listeners on the self-signed pair, nothing stored', async () => {
    const run = await tls(['status']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe([
      'listeners:',
      '  inbound: TLS on',
      '    assigned: none',
      '    presents: self_signed (the shared self-signed pair)',
      '  submission: TLS on',
      '    assigned: none',
      '    presents: self_signed (the shared self-signed pair)',
      'certificates:',
      '  none stored',
      '',
    ].join('\n'));
  });

  it('status prints no warning: its queries never overlap on one connection (pg deprecates that, and pg 9 refuses it)', async () => {
    const run = await tls(['status']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('DeprecationWarning');
    expect(run.stderr).toBe('');
  });

  it('assign, status, unassign: each write moves tls_state.generation', async () => {
    await insertCertificate(sql, encryptionKey, { name: 'mx1', kind: 'issued', hosts: ['mx1.example.net'], days: 90 });
    await insertCertificate(sql, encryptionKey, { name: 'soon', kind: 'uploaded', hosts: ['soon.example.net', 'alt.example.net'], days: 10 });
    const before = await generation();

    const assigned = await tls(['assign', '--listener', 'inbound', '--certificate', 'mx1']);
    expect(assigned.code, assigned.stderr).toBe(0);
    expect(assigned.stderr).toContain('listener inbound now presents certificate "mx1" (nothing was assigned before)');
    expect(await assignments()).toEqual([{ listener: 'inbound', name: 'mx1' }]);
    const afterAssign = await generation();
    expect(afterAssign).toBeGreaterThan(before);

    // An installation-wide node whose last heartbeat predates the assignment: shown as behind.
    const { rows: [project] } = await sql.query(`INSERT INTO projects (name) VALUES ('ops') RETURNING id`);
    await sql.query(
      `INSERT INTO relay_nodes (project_id, name, key_prefix, key_hash, installation_wide, listeners, tls, last_heartbeat_at)
       VALUES ($1, 'mx-a', 'myr_mxa', 'x', true, $2, $3, '2026-01-02T03:04:05Z')`,
      [project.id, JSON.stringify([{ name: 'inbound', port: 25, tls: 'starttls', proxy_protocol: false, certificate: { source: 'self_signed', certificate: 'self-signed', not_after: null } }]),
        JSON.stringify({ source: 'self_signed', generation: before })]);
    const status = await tls(['status']);
    expect(status.code, status.stderr).toBe(0);
    const lines = status.stdout.split('\n');
    expect(lines.slice(0, 5)).toEqual([
      'listeners:',
      '  inbound: TLS on',
      expect.stringMatching(/^ {4}assigned: mx1 \(issued\), expires \d{4}-\d\d-\d\d \((89|90) days left\)$/),
      '    presents: assigned (the assigned certificate)',
      `    node mx-a: reported self_signed "self-signed", holds generation ${before} of ${afterAssign}, last heartbeat 2026-01-02T03:04:05.000Z`,
    ]);
    expect(lines).toContain(`    node mx-a: reported no certificate, holds generation ${before} of ${afterAssign}, last heartbeat 2026-01-02T03:04:05.000Z`);
    expect(lines).toContain('    presents: self_signed (the shared self-signed pair)');
    // Soonest expiry first; within 30 days it is flagged.
    const stored = lines.slice(lines.indexOf('certificates:') + 1).filter(Boolean);
    expect(stored).toEqual([
      expect.stringMatching(/^ {2}soon {2}uploaded {2}soon\.example\.net,alt\.example\.net {2}expires \S+ \((9|10) days left, EXPIRING SOON\)$/),
      expect.stringMatching(/^ {2}mx1 {2}issued {2}mx1\.example\.net {2}expires \S+ \((89|90) days left\)$/),
    ]);

    const replaced = await tls(['assign', '--listener', 'inbound', '--certificate', 'soon']);
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(replaced.stderr).toContain('(replacing "mx1")');
    expect(await assignments()).toEqual([{ listener: 'inbound', name: 'soon' }]);
    const afterReplace = await generation();
    expect(afterReplace).toBeGreaterThan(afterAssign);

    const unassigned = await tls(['unassign', '--listener', 'inbound']);
    expect(unassigned.code, unassigned.stderr).toBe(0);
    expect(unassigned.stderr).toContain('listener inbound no longer presents "soon"');
    expect(await assignments()).toEqual([]);
    expect(await generation()).toBeGreaterThan(afterReplace);
    // Both certificates are kept.
    expect((await sql.query('SELECT name FROM certificates ORDER BY name')).rows.map((r) => r.name)).toEqual(['mx1', 'soon']);

    // Again: nothing to drop is said, and is no error.
    const again = await tls(['unassign', '--listener', 'inbound']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('listener inbound had no certificate assigned: nothing changed');
  });

  it('a listener with TLS off takes the assignment, shows TLS off and presents nothing', async () => {
    const off = { SERVICE_SUBMISSION_TLS_ENABLED: 'false' };
    const run = await tls(['assign', '--listener', 'submission', '--certificate', 'mx1'], off);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('which has TLS off: it presents nothing until TLS is turned on');
    const status = await tls(['status'], off);
    const lines = status.stdout.split('\n');
    const at = lines.indexOf('  submission: TLS off');
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toMatch(/^ {4}assigned: mx1 \(issued\), expires/);
    expect(lines[at + 2]).toBe('    presents: none (nothing (TLS off))');
    expect((await tls(['unassign', '--listener', 'submission'])).code).toBe(0);
  });

  describe('refusals: exit non-zero, one line naming the problem, no row changed', () => {
    beforeAll(async () => {
      await insertCertificate(sql, encryptionKey, { name: 'root-ca', kind: 'authority', hosts: [], days: 3650 });
      await insertCertificate(sql, encryptionKey, { name: 'old', kind: 'uploaded', hosts: ['old.example.net'], days: -3 });
      // Something assigned, so that a refusal that dropped or replaced it would show.
      expect((await tls(['assign', '--listener', 'inbound', '--certificate', 'mx1'])).code).toBe(0);
    });

    const REFUSALS: [string, string[], unknown][] = [
      ['a certificate authority', ['assign', '--listener', 'inbound', '--certificate', 'root-ca'],
        'edgemail: certificate "root-ca" is a certificate authority: assign a certificate it issued, not the authority itself'],
      ['an unknown certificate', ['assign', '--listener', 'inbound', '--certificate', 'nope'],
        'edgemail: certificate not found: "nope"'],
      ['an unknown listener (assign)', ['assign', '--listener', 'smtps', '--certificate', 'mx1'],
        'edgemail: listener not found: "smtps" (the listeners are inbound and submission)'],
      ['an unknown listener (unassign)', ['unassign', '--listener', 'smtps'],
        'edgemail: listener not found: "smtps" (the listeners are inbound and submission)'],
      ['an expired certificate', ['assign', '--listener', 'inbound', '--certificate', 'old'],
        expect.stringMatching(/^edgemail: certificate "old" expired on \d{4}-\d\d-\d\dT[\d:.]+Z: renew or replace it before assigning it$/)],
    ];

    // Run side by side (none may change anything, so none can disturb another): one child process start-up each.
    it('an authority, an unknown certificate or listener, an expired certificate', async () => {
      const before = await snapshot();
      const runs = await Promise.all(REFUSALS.map(([, args]) => tls(args)));
      runs.forEach((run, i) => {
        const [what, , message] = REFUSALS[i]!;
        expect(run.code, what).toBe(1);
        expect(run.stdout, what).toBe('');
        expect(run.stderr.trimEnd().split('\n'), what).toEqual([message]);
      });
      expect(await snapshot()).toEqual(before);
      expect(await assignments()).toEqual([{ listener: 'inbound', name: 'mx1' }]);
    });

    it('a missing flag is a usage error naming it', async () => {
      const before = await snapshot();
      const [noListener, noCertificate] = await Promise.all([tls(['assign', '--certificate', 'mx1']), tls(['assign', '--listener', 'inbound'])]);
      expect(noListener.code).toBe(2);
      expect(noListener.stderr.split('\n')[0]).toBe('edgemail: --listener <inbound|submission> is required');
      expect(noCertificate.code).toBe(2);
      expect(noCertificate.stderr.split('\n')[0]).toBe('edgemail: --certificate <name> is required');
      expect(await snapshot()).toEqual(before);
    });
  });
});
