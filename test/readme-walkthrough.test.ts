// The README as a newcomer follows it: every shell block of "First steps",
// "Receive mail", "Send mail" and "Get told when mail arrives", in order, in
// one bash session against a real `pnpm dev`. Only the ports and the data
// directory are changed (this run's free ones); a pause before each numbered
// step stands in for the person reading it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { afterAll, expect, test } from 'vitest';
import { freePort } from './support/global-setup.js';
import { reachableByPostgres } from '../edge/local/postgres.js';
import { sendMessage } from '../relay-node/test-support/smtp-client.js';
import { killGroup, ROOT, startPnpmDev } from './support/pnpm-dev.js';

const SECTIONS = ['First steps with the API', 'Receive mail', 'Send mail', 'Get told when mail arrives'];
// The README's commands use these; no npm package stands in for them.
const TOOLS = ['bash', 'curl', 'python3'];
const missing = TOOLS.filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
if (missing.length) console.warn(`readme-walkthrough: skipped, ${missing.join(', ')} not installed`);

const dataDir = mkdtempSync(`${ROOT}.data/readme-`);
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) killGroup(child);
  if (process.getuid?.() === 0) rmSync(reachableByPostgres(`${dataDir}/pg`), { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

/** The ```sh blocks of one `## <title>` section of the README. */
function shellBlocks(readme: string, title: string): string[] {
  const start = readme.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`README has no section "${title}"`);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

function spawnGroup(command: string, args: string[], env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (d) => { output += d; });
  child.stderr!.on('data', (d) => { output += d; });
  return { child, output: () => output };
}

test.skipIf(missing.length > 0)('the README\'s commands work in order against pnpm dev', async () => {
  const [pgPort, bridgePort, workerPort, inboundPort, receiverPort] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
  const env = {
    EDGEMAIL_DATA_DIR: dataDir, EDGEMAIL_PG_PORT: String(pgPort), EDGEMAIL_BRIDGE_PORT: String(bridgePort),
    EDGEMAIL_PORT: String(workerPort), EDGEMAIL_INBOUND_PORT: String(inboundPort), EDGEMAIL_SUBMISSION_PORT: '0',
  };
  // As the README's webhook section says to start it.
  const dev = await startPnpmDev({ ...env, SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }, { silent: true });
  children.push(dev.child);

  const readme = readFileSync(`${ROOT}README.md`, 'utf8');
  // The README's swaks line asks for STARTTLS, which swaks does only with Net::SSLeay; smtplib follows it anyway.
  const hasSwaks = !/TLS not available/.test(spawnSync('sh', ['-c', 'swaks --support 2>&1 || echo "TLS not available"'], { encoding: 'utf8' }).stdout);
  const script = SECTIONS.flatMap((title) => shellBlocks(readme, title))
    // The optional second relay node needs a key of its own ($NODE_KEY); not part of the walk.
    .filter((block) => !block.includes('relay enroll'))
    .join('\n')
    .replaceAll('localhost:8787', `127.0.0.1:${workerPort}`)
    .replaceAll('127.0.0.1:2525', `127.0.0.1:${inboundPort}`)
    .replaceAll('listen(9000)', `listen(${receiverPort})`)
    .replaceAll('127.0.0.1:9000', `127.0.0.1:${receiverPort}`)
    .replaceAll(' .data/', ` ${dataDir}/`)
    .replaceAll('("127.0.0.1", 2525)', `("127.0.0.1", ${inboundPort})`)
    .split('\n')
    .filter((line) => hasSwaks || !line.startsWith('swaks '))
    .map((line) => (/^# \d+\. /.test(line) ? `sleep 1\n${line}` : line))
    .join('\n');
  expect(script).not.toMatch(/8787|2525|:9000/); // every port of the README was replaced

  const walk = spawnGroup('bash', ['-c', `set -euo pipefail\n${script}\necho "WALKED $SENDER $INBOX $HOOKS $WEBHOOK_ID"`], { ...env });
  const code = await new Promise<number | null>((resolve) => walk.child.on('exit', resolve));
  expect(code, walk.output()).toBe(0);
  const [, sender, inbox, hooks, webhookId] = /WALKED (\S+) (\S+) (\S+) (\S+)/.exec(walk.output()) ?? [];
  expect(webhookId, walk.output()).toMatch(/^[0-9a-f-]{36}$/);

  const api = async (path: string, token: string) => {
    const res = await fetch(`http://127.0.0.1:${workerPort}${path}`, { headers: { authorization: `Bearer ${token}` } });
    return res.json() as Promise<any>;
  };
  // First steps: the project is on the plan the README created.
  expect((await api('/api/v1/usage', sender!)).usage.plan).toMatchObject({ name: 'starter' });
  // Receive mail: the message(s) the README sent are stored.
  expect((await api('/api/v1/inbound-emails', inbox!)).inbound_emails.length).toBeGreaterThanOrEqual(1);
  // Send mail: the message was captured, DKIM-signed.
  const captured = readdirSync(`${dataDir}/outbound-capture`).filter((f) => f.endsWith('.eml'));
  expect(captured.length).toBeGreaterThanOrEqual(1);
  expect(readFileSync(`${dataDir}/outbound-capture/${captured[0]}`, 'utf8')).toMatch(/^DKIM-Signature: .*d=news\.test/m);
  // Get told: mail from example.org now reaches the README's receiver, signed.
  const sent = await sendMessage({ port: inboundPort, from: 'ann@example.org', to: 'support@acme.test', message: 'From: ann@example.org\r\nTo: support@acme.test\r\nSubject: Hooked\r\n\r\nHi.\r\n' });
  expect(sent.response).toMatch(/^250/);
  const until = Date.now() + 15_000;
  while (!/sha256=[0-9a-f]{64} \{"event":"inbound.received"/.test(walk.output()) && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
  expect(walk.output()).toMatch(/sha256=[0-9a-f]{64} \{"event":"inbound.received"/);
  const deliveries = await api(`/api/v1/webhooks/${webhookId}/deliveries`, hooks!);
  expect(JSON.stringify(deliveries)).toContain('succeeded');
}, 240_000);
