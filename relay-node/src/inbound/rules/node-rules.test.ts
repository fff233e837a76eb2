import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { DomainsAnswer } from '@edgemail/shared';
import { createNodeRules, parseHeaderBlock } from './node-rules.js';
import { captureHeaderBlock, HEADER_CAPTURE_MAX } from './at-smtp.js';

const answer = (inbound_rules: DomainsAnswer['inbound_rules']): DomainsAnswer => ({ domains: ['acme.test', 'globex.test'], version: 'v', inbound_rules });
const acme = answer([{ domains: ['acme.test'], rules: [
  { match: { recipient: 'vip-*@acme.test' }, refuse: null },
  { match: { recipient: 'old-*@acme.test' }, refuse: 'Gone' },
  { match: { subject: '*lottery*' }, refuse: 'No lotteries' },
] }]);

describe('node rules', () => {
  it('refuses at RCPT what the recipient decides; an earlier accepting rule wins', () => {
    const rules = createNodeRules(() => acme);
    expect(rules.atRcpt('old-bob@acme.test', 'acme.test', 'a@x.test')).toBe('Gone');
    expect(rules.atRcpt('vip-old@acme.test', 'acme.test', 'a@x.test')).toBeNull();
    expect(rules.atRcpt('bob@acme.test', 'acme.test', 'a@x.test')).toBeNull();
    expect(rules.atRcpt('old-bob@globex.test', 'globex.test', 'a@x.test')).toBeNull();
  });

  it('waits for DATA when a rule before the refusal needs the message', () => {
    const rules = createNodeRules(() => answer([{ domains: ['acme.test'], rules: [
      { match: { subject: 'keep' }, refuse: null },
      { match: { recipient: '*@acme.test' }, refuse: 'No' },
    ] }]));
    expect(rules.atRcpt('bob@acme.test', 'acme.test', '')).toBeNull();
    expect(rules.atData([{ address: 'bob@acme.test', domain: 'acme.test' }], { sender: '', subject: 'other', headers: {} })).toBe('No');
    expect(rules.atData([{ address: 'bob@acme.test', domain: 'acme.test' }], { sender: '', subject: 'keep', headers: {} })).toBeNull();
  });

  it('refuses at DATA only when every recipient\'s project refuses', () => {
    const rules = createNodeRules(() => acme);
    const facts = { sender: 'a@x.test', subject: 'You won the LOTTERY', headers: {} };
    expect(rules.atData([{ address: 'bob@acme.test', domain: 'acme.test' }], facts)).toBe('No lotteries');
    expect(rules.atData([{ address: 'bob@acme.test', domain: 'acme.test' }, { address: 'ann@globex.test', domain: 'globex.test' }], facts)).toBeNull();
  });

  it('judges only the domains it holds rules for (the header block is read for those only), following the list', () => {
    let current: DomainsAnswer = acme;
    const rules = createNodeRules(() => current);
    expect(rules.judges(['globex.test'])).toBe(false);
    expect(rules.judges(['globex.test', 'acme.test'])).toBe(true);
    current = answer([]);
    expect(rules.judges(['acme.test'])).toBe(false);
  });

  it('follows the list: a new answer is compiled again', () => {
    let current: DomainsAnswer | null = null;
    const rules = createNodeRules(() => current);
    expect(rules.atRcpt('old-bob@acme.test', 'acme.test', '')).toBeNull();
    current = acme;
    expect(rules.atRcpt('old-bob@acme.test', 'acme.test', '')).toBe('Gone');
  });
});

describe('the header block', () => {
  it('parses names in lower case, unfolds values and keeps repeated ones', () => {
    expect(parseHeaderBlock('Subject: Hello\r\n  world\r\nX-Tag: a\r\nx-tag: b\r\n\r\nBody: no\r\n')).toEqual({ subject: 'Hello world', 'x-tag': ['a', 'b'] });
    // Bare line feeds; nothing after the blank line counts, however it looks.
    expect(parseHeaderBlock('A: 1\n B\n\n  folded-looking body\nC: 2\n')).toEqual({ a: '1 B' });
    expect(parseHeaderBlock('\r\nA: 1\r\n\r\n')).toEqual({});
  });
  it('is captured from the data up to the blank line, bounded', async () => {
    const source = new PassThrough();
    const block = captureHeaderBlock(source);
    source.resume();
    source.write('Subject: hi\r\n');
    source.write('\r\nbody body body');
    source.end('more');
    await new Promise((r) => source.on('end', r));
    expect(parseHeaderBlock(block())).toEqual({ subject: 'hi' });
    const big = new PassThrough();
    const bigBlock = captureHeaderBlock(big);
    big.resume();
    big.end(Buffer.alloc(HEADER_CAPTURE_MAX * 2, 'a'));
    await new Promise((r) => big.on('end', r));
    expect(bigBlock().length).toBe(HEADER_CAPTURE_MAX);
  });
});
