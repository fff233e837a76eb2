// Mail authentication at a relay node against the real edge (workerd,
// PostgreSQL, R2), as a user reads it through `/api/v1/inbound-emails`:
// a sender's Authentication-Results that claims the node's host name does not
// survive into the stored message (RFC 8601 section 5), and a message whose
// checks pass `relay_node.inbound.mail_auth_timeout` is still answered 250,
// forwarded and stored, with `temperror` verdicts. The DKIM bounds are tested
// at the listener (relay-node/src/inbound/mail-auth/bounded-dkim.test.ts).
import { createSocket, type Socket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { enrollNode, type RelayNode } from '../relay-node/src/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import { sendMessage } from '../relay-node/test-support/smtp-client.js';
import { registerProvenDomain } from './support/domain-ownership.js';
import { inboundRecords, rawMessage, startTestNode } from './support/relay-node.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';

const DOMAIN = 'acme-mail-auth.test';
const TO = `support@${DOMAIN}`;
const HOST_NAME = 'mx.relay-auth.test';

let stack: TestStack;
let key: string;
let dns: TestDnsServer;
/** A DNS server that never answers: every check waits for its deadline. */
let silent: Socket;
/** Checks against the test DNS server. */
let checking: RelayNode;
/** Checks against the silent one, with a 1 s `mail_auth_timeout`. */
let slow: RelayNode;
const stateDirs: string[] = [];
const logs: LogLine[] = [];
const log = collectingLog(logs);

beforeAll(async () => {
  stack = await startTestStack();
  const admin = await platformToken(stack);
  const tenant = await seedProject(stack, admin, 'mail-auth');
  ({ token: key } = await tenant.key(['relay:write', 'domains:write', 'inbound:read']));
  await registerProvenDomain(stack, key, DOMAIN);
  // forger.example lets no address send for it: our own verdict is spf=fail.
  dns = await startDnsServer({ 'forger.example': { TXT: ['v=spf1 -all'] } });
  silent = createSocket('udp4');
  await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
  const node = async (name: string, dnsAddress: string, env: Record<string, string> = {}) => {
    const stateDir = mkdtempSync(join(tmpdir(), `relay-${name}-`));
    stateDirs.push(stateDir);
    await enrollNode({ edgeUrl: stack.url, key, name, stateDir });
    return startTestNode({ stack, stateDir, dnsAddress, log, hostName: HOST_NAME, env });
  };
  [checking, slow] = await Promise.all([
    node('mx-checking', dns.address),
    node('mx-slow', `127.0.0.1:${silent.address().port}`, { SERVICE_RELAY_NODE_INBOUND_MAIL_AUTH_TIMEOUT: '1s' }),
  ]);
});
afterAll(async () => {
  await Promise.all([checking?.stop(), slow?.stop()]);
  silent?.close();
  await dns?.close();
  await stack?.stop();
  for (const dir of stateDirs) rmSync(dir, { recursive: true, force: true });
});

const recordBySubject = (subject: string) =>
  eventually(async () => (await inboundRecords(stack, key)).find((r) => r.subject === subject), (r) => r !== undefined, 20_000);

describe('Authentication-Results and the verification deadline at a relay node', () => {
  test("a sender's Authentication-Results naming our host is removed; an upstream host's stays; ours is the one stored", async () => {
    const forged = [
      `Authentication-Results: ${HOST_NAME}; dkim=pass header.d=bank.example; spf=pass; dmarc=pass`,
      // The same claim spelt otherwise: upper case, a comment, folded, a trailing dot.
      `Authentication-Results: (trust me) ${HOST_NAME.toUpperCase()}.\r\n  1; dmarc=pass header.from=bank.example`,
      'Authentication-Results: mx.upstream.example; spf=pass smtp.mailfrom=forger.example',
    ].join('\r\n');
    const message = `${forged}\r\nFrom: CEO <ceo@forger.example>\r\nTo: <${TO}>\r\nSubject: forged-results\r\nMessage-ID: <forged@forger.example>\r\n\r\nPay the invoice.\r\n`;
    const sent = await sendMessage({ port: checking.port, from: 'ceo@forger.example', to: TO, message });
    expect(sent.response).toMatch(/^250 /);

    const record = await recordBySubject('forged-results');
    expect(record.auth).toMatchObject({ spf: 'fail', dkim: 'none', aligned: false });
    // Repeated headers keep every value, top first: ours, then the upstream one the sender supplied.
    const [ours, upstream, ...more] = record.headers['authentication-results'] as string[];
    expect(ours).toMatch(new RegExp(`^${HOST_NAME.replace(/\./g, '\\.')};`));
    expect(ours).toContain('spf=fail');
    expect(upstream).toBe('mx.upstream.example; spf=pass smtp.mailfrom=forger.example');
    expect(more).toEqual([]);

    const raw = await rawMessage(stack, key, record.id);
    expect(raw.status).toBe(200);
    const header = raw.bytes.toString('latin1').split('\r\n\r\n')[0]!.replace(/\r\n[ \t]+/g, ' ');
    const results = header.split('\r\n').filter((line) => /^authentication-results\s*:/i.test(line));
    // Ours (added in front when forwarded) and the upstream one: nothing claims a pass in our name.
    expect(results).toHaveLength(2);
    expect(results[0]).toMatch(new RegExp(`^Authentication-Results: ${HOST_NAME.replace(/\./g, '\\.')}; .*spf=fail`));
    expect(results[1]).toBe('Authentication-Results: mx.upstream.example; spf=pass smtp.mailfrom=forger.example');
    expect(header).not.toContain('bank.example');
    expect(header).not.toContain('trust me');
  });

  test('a message whose checks pass mail_auth_timeout is answered 250, forwarded and stored with temperror verdicts', async () => {
    const message = `From: Ann <ann@sender.example>\r\nTo: <${TO}>\r\nSubject: slow-checks\r\nMessage-ID: <slow@sender.example>\r\n\r\nHello.\r\n`;
    // The DNS never answers (each lookup would wait 2 × 3 s): the 1 s deadline decides.
    const sent = await sendMessage({ port: slow.port, from: 'ann@sender.example', to: TO, message });
    expect(sent.response).toMatch(/^250 /);

    const record = await recordBySubject('slow-checks');
    expect(record.status).toBe('received');
    expect(record.text_body).toBe('Hello.\n');
    expect(record.auth).toEqual({ spf: 'temperror', dkim: 'temperror', dmarc: 'temperror', aligned: false, client_ip: '127.0.0.1' });
    const raw = await rawMessage(stack, key, record.id);
    expect(raw.bytes.toString('latin1')).toContain('dkim=temperror; dmarc=temperror (checks took longer than 1000 ms)');
  });
});
