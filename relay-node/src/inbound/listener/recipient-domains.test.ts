// One message reaches at most MAX_RECIPIENT_DOMAINS domains (so at most that
// many projects): the edge could not store a message for more, and the node
// must not 250 what the edge will refuse for good.
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_RECIPIENT_DOMAINS } from '@edgemail/shared';
import { startInbound, type RunningInbound } from '../../../test-support/inbound-harness.js';
import { openRaw } from '../../../test-support/smtp-raw.js';

let inbound: RunningInbound | undefined;
afterEach(async () => { await inbound?.close(); inbound = undefined; });

const domain = (i: number) => `d${i}.test`;

describe('recipient domains per message', () => {
  it(`accepts ${MAX_RECIPIENT_DOMAINS} domains, answers 452 4.5.3 for one more, and still takes more recipients of the domains it has`, async () => {
    inbound = await startInbound({ domains: Array.from({ length: MAX_RECIPIENT_DOMAINS + 1 }, (_, i) => domain(i)) });
    const raw = await openRaw(inbound.port);
    await raw.reply();
    await raw.command('EHLO client.test');
    expect(await raw.command('MAIL FROM:<ann@example.org>')).toMatch(/^250/);
    for (let i = 0; i < MAX_RECIPIENT_DOMAINS; i++) expect(await raw.command(`RCPT TO:<a@${domain(i)}>`)).toMatch(/^250/);
    expect(await raw.command(`RCPT TO:<a@${domain(MAX_RECIPIENT_DOMAINS)}>`)).toBe(
      `452 4.5.3 <a@${domain(MAX_RECIPIENT_DOMAINS)}>: too many recipient domains in one message (at most ${MAX_RECIPIENT_DOMAINS}); send to the rest in another`);
    // Another recipient at a domain already in the message is fine.
    expect(await raw.command(`RCPT TO:<b@${domain(0)}>`)).toMatch(/^250/);
    expect(await raw.command('DATA')).toMatch(/^354/);
    expect(await raw.command('Subject: many\r\n\r\nHi.\r\n.')).toMatch(/^250/);
    expect(inbound.store.messages[0]!.envelope.rcptTo).toHaveLength(MAX_RECIPIENT_DOMAINS + 1);
    // The next message of the session starts from none.
    expect(await raw.command('MAIL FROM:<ann@example.org>')).toMatch(/^250/);
    expect(await raw.command(`RCPT TO:<a@${domain(MAX_RECIPIENT_DOMAINS)}>`)).toMatch(/^250/);
    raw.close();
  });
});
