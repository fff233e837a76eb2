// The README as a newcomer follows it: every shell block of "First steps",
// "Receive mail" (the second relay node included), "Send mail" and "Get told
// when mail arrives", in order, in one bash session against a real `pnpm dev`
// on ports that are not the defaults, then all of it once more in a new session
// (a user re-running the blocks). The blocks run as written: the ports and the
// data directory reach them through the EDGEMAIL_* variables a user exports (and
// HOOK_PORT, NODE2_PORT, NODE2_SUBMISSION_PORT for the README's own listeners).
// A pause before each numbered step stands in for the person reading it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { afterAll, expect, test } from 'vitest';
import { freePort } from './support/global-setup.js';
import { reachableByPostgres } from '../edge/local/postgres.js';
import { sendMessage } from '../relay-node/test-support/smtp-client.js';
import { killGroup, listening, ROOT, startPnpmDev } from './support/pnpm-dev.js';

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

/** `command` in its own process group, with this environment minus SERVICE_* (as a user's shell) plus `env`. */
function spawnGroup(command: string, args: string[], env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SERVICE_')));
  const child = spawn(command, args, { cwd: ROOT, env: { ...base, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (d) => { output += d; });
  child.stderr!.on('data', (d) => { output += d; });
  return { child, output: () => output };
}

/** Runs the README's script in a new bash session; the values it made, and everything printed (background jobs' lines keep coming). */
async function walk(script: string, env: Record<string, string>) {
  const run = spawnGroup('bash', ['-c', `set -euo pipefail\n${script}\necho "WALKED $SENDER $INBOX $HOOKS $WEBHOOK_ID $PROJECT_ID"`], env);
  const code = await new Promise<number | null>((resolve) => run.child.on('exit', resolve));
  expect(code, run.output()).toBe(0);
  const [, sender, inbox, hooks, webhookId, projectId] = /WALKED (\S+) (\S+) (\S+) (\S+) (\S+)/.exec(run.output()) ?? [];
  expect(webhookId, run.output()).toMatch(/^[0-9a-f-]{36}$/);
  return { sender: sender!, inbox: inbox!, hooks: hooks!, webhookId: webhookId!, projectId: projectId!, output: run.output };
}

test.skipIf(missing.length > 0)('the README\'s commands work in order against pnpm dev on other ports, and again when run twice', async () => {
  const [pgPort, bridgePort, workerPort, inboundPort, hookPort, node2Port, node2SubmissionPort] =
    await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort(), freePort(), freePort()]);
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
  const blocks = SECTIONS.flatMap((title) => shellBlocks(readme, title)).join('\n');
  // A user on other ports edits nothing: every port and the data directory come from a variable.
  expect(blocks.replace(/\$\{\w+:-[^}]*\}/g, '')).not.toMatch(/8787|2525|2526|2587|2588|9000|localhost|\.data/);
  expect(blocks).toContain('relay start'); // the second node is part of the walk
  const script = blocks
    .split('\n')
    .filter((line) => hasSwaks || !line.startsWith('swaks '))
    .join('\n');
  // The first reader pauses at each numbered step; the re-run is pasted at once.
  const reading = script.replace(/^(# \d+\. )/gm, 'sleep 1\n$1');
  const walkEnv = { ...env, HOOK_PORT: String(hookPort), NODE2_PORT: String(node2Port), NODE2_SUBMISSION_PORT: String(node2SubmissionPort) };

  const first = await walk(reading, walkEnv);
  // The second node the README starts is up, and it serves the project's domains.
  expect(await listening(node2Port), first.output()).toBe(true);
  // Run again: what the first run made is found, not made twice, and nothing fails.
  const second = await walk(script, walkEnv);
  expect(second.projectId).toBe(first.projectId);
  expect(second.webhookId).toBe(first.webhookId);

  // The helpers stop on an HTTP error, showing the edge's answer, and on a wrong port, saying so:
  // never a JSON SyntaxError or TypeError from the value picker.
  const helpers = shellBlocks(readme, SECTIONS[0]!)[0]!.split(/^# 1\. /m)[0]!;
  const stops = async (extraEnv: Record<string, string>, line: string) => {
    const run = spawnGroup('bash', ['-c', `set -uo pipefail\n${helpers}\nV=$(${line}) && echo "GOT $V" || echo "STOPPED $?"`], { ...walkEnv, ...extraEnv });
    await new Promise((resolve) => run.child.on('exit', resolve));
    expect(run.output()).toMatch(/^STOPPED [1-9]/m);
    expect(run.output()).not.toMatch(/SyntaxError|TypeError|GOT/);
    return run.output();
  };
  expect(await stops({}, 'api $E/api/v1/permissions -H "Authorization: Bearer myk_wrong" | json permissions')).toMatch(/\{"error":/);
  expect(await stops({ EDGEMAIL_PORT: String(await freePort()) }, 'api $E/api/v1/permissions | json permissions')).toMatch(/Failed to connect|Couldn't connect|Connection refused/i);

  const api = async (path: string, token: string) => {
    const res = await fetch(`http://127.0.0.1:${workerPort}${path}`, { headers: { authorization: `Bearer ${token}` } });
    return res.json() as Promise<any>;
  };
  // First steps: the project is on the plan the README created.
  expect((await api('/api/v1/usage', second.sender)).usage.plan).toMatchObject({ name: 'starter' });
  // One domain each, one webhook, after two runs.
  expect((await api('/api/v1/domains', second.inbox)).domains.map((d: any) => d.name).sort()).toEqual(['acme.test', 'news.test']);
  expect((await api('/api/v1/webhooks', second.hooks)).webhooks).toHaveLength(1);
  // Receive mail: the messages both runs sent are stored.
  expect((await api('/api/v1/inbound-emails', second.inbox)).inbound_emails.length).toBeGreaterThanOrEqual(2);
  // Send mail: the message was captured, DKIM-signed.
  const captured = readdirSync(`${dataDir}/outbound-capture`).filter((f) => f.endsWith('.eml'));
  expect(captured.length).toBeGreaterThanOrEqual(1);
  expect(readFileSync(`${dataDir}/outbound-capture/${captured[0]}`, 'utf8')).toMatch(/^DKIM-Signature: .*d=news\.test/m);

  // The second node takes mail for the project's domain on its own port...
  const node2 = JSON.parse(readFileSync(`${dataDir}/node-2/node.json`, 'utf8')).node_id as string;
  const toNode2 = await sendMessage({ port: node2Port, from: 'bob@example.org', to: 'support@acme.test', message: 'From: bob@example.org\r\nTo: support@acme.test\r\nSubject: Via node 2\r\n\r\nHi.\r\n' });
  expect(toNode2.response).toMatch(/^250/);
  // ...and, claiming the project's outbound mail beside the dev node, delivers it as that node does:
  // sends (a few at a time, until node-2 has claimed some: which node polls first is a race) are all
  // sent (captured), none failed for want of DNS or port 25.
  const send = async (i: number) => {
    const res = await fetch(`http://127.0.0.1:${workerPort}/api/v1/emails/send`, {
      method: 'POST', headers: { authorization: `Bearer ${second.sender}`, 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'hello@news.test', to: [`reader${i}@example.org`], subject: `Both nodes ${i}`, text: 'Hi.' }),
    });
    expect(res.status, await res.clone().text()).toBe(201);
  };
  const readers = async () => (await api('/api/v1/emails?limit=100', second.sender)).emails.filter((e: any) => /^reader\d+@/.test(e.recipient)) as any[];
  const settled = (emails: any[]) => emails.every((e) => e.status !== 'queued' && e.status !== 'sending');
  let sends = 0;
  let emails: any[] = [];
  const done = Date.now() + 40_000;
  while (Date.now() < done) {
    emails = await readers();
    if (emails.length === sends && settled(emails) && (emails.some((e) => e.node_id === node2) || sends >= 40)) break;
    if (sends < 40) await Promise.all([send(sends++), send(sends++)]);
    await new Promise((r) => setTimeout(r, 500));
  }
  expect(emails.map((e) => e.status), JSON.stringify(emails, null, 1)).toEqual(emails.map(() => 'sent'));
  expect(emails.length).toBe(sends);
  expect(emails.filter((e) => e.node_id === node2).length, JSON.stringify(emails, null, 1)).toBeGreaterThanOrEqual(1);

  // Get told: mail from example.org now reaches the README's receiver (the first run's; the second found it running), signed.
  const sent = await sendMessage({ port: inboundPort, from: 'ann@example.org', to: 'support@acme.test', message: 'From: ann@example.org\r\nTo: support@acme.test\r\nSubject: Hooked\r\n\r\nHi.\r\n' });
  expect(sent.response).toMatch(/^250/);
  const until = Date.now() + 15_000;
  const hooked = () => /sha256=[0-9a-f]{64} \{"event":"inbound.received"/.test(first.output() + second.output());
  while (!hooked() && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
  expect(hooked(), first.output() + second.output()).toBe(true);
  const deliveries = await api(`/api/v1/webhooks/${first.webhookId}/deliveries`, first.hooks);
  expect(JSON.stringify(deliveries)).toContain('succeeded');
}, 240_000);
