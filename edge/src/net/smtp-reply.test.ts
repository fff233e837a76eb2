import { describe, expect, test } from 'vitest';
import {
  authPlainResponse, base64Utf8, chooseAuthMechanism, ehloCapabilities, MAX_REPLY_CHARS, ReplyBuffer, replyText, SmtpProtocolError,
} from './smtp-reply.js';

describe('ReplyBuffer', () => {
  test('one reply per final line; multi-line replies joined; chunks split anywhere', () => {
    const r = new ReplyBuffer();
    r.push('220 mx.example.org ES');
    expect(r.take()).toBeNull();
    r.push('MTP ready\r\n250-mx.example.org\r\n250-STARTTLS\r\n');
    expect(r.take()).toEqual({ code: 220, lines: ['220 mx.example.org ESMTP ready'] });
    expect(r.take()).toBeNull();
    r.push('250 AUTH PLAIN\r\n');
    const ehlo = r.take()!;
    expect(ehlo.code).toBe(250);
    expect(replyText(ehlo)).toBe('250-mx.example.org\n250-STARTTLS\n250 AUTH PLAIN');
    expect(r.pending).toBe(false);
  });

  test('a bare LF ends a line, and a code alone is a final line', () => {
    const r = new ReplyBuffer();
    r.push('221\n354 go ahead\n');
    expect(r.take()).toEqual({ code: 221, lines: ['221'] });
    expect(r.take()).toEqual({ code: 354, lines: ['354 go ahead'] });
  });

  test('text that is no reply, mixed codes and endless replies are protocol errors', () => {
    const banner = new ReplyBuffer();
    banner.push('SSH-2.0-OpenSSH_9.6\r\n');
    expect(() => banner.take()).toThrow(new SmtpProtocolError('not an SMTP reply: "SSH-2.0-OpenSSH_9.6"'));
    const mixed = new ReplyBuffer();
    mixed.push('250-a\r\n550 b\r\n');
    expect(() => mixed.take()).toThrow(SmtpProtocolError);
    const endless = new ReplyBuffer();
    expect(() => { for (let i = 0; i < 1000; i++) endless.push('250-more and more capability text\r\n'); }).toThrow(`reply longer than ${MAX_REPLY_CHARS} characters`);
  });

  test('clear() drops what was buffered (text past the 220 to STARTTLS)', () => {
    const r = new ReplyBuffer();
    r.push('220 go ahead\r\n250 injected\r\n');
    expect(r.take()!.code).toBe(220);
    expect(r.pending).toBe(true);
    r.clear();
    expect(r.take()).toBeNull();
  });
});

describe('ehloCapabilities', () => {
  const reply = (...lines: string[]) => ({ code: 250, lines });

  test('STARTTLS and AUTH mechanisms, in either spelling, any case', () => {
    expect(ehloCapabilities(reply('250-mx hello', '250-starttls', '250-AUTH PLAIN login', '250 AUTH=CRAM-MD5 PLAIN')))
      .toEqual({ starttls: true, auth: ['PLAIN', 'LOGIN', 'CRAM-MD5'] });
    // The first line is the server's name, never a capability.
    expect(ehloCapabilities(reply('250 STARTTLS'))).toEqual({ starttls: false, auth: [] });
  });

  test('PLAIN is preferred, LOGIN next, anything else is none the probe speaks', () => {
    expect(chooseAuthMechanism(['LOGIN', 'PLAIN'])).toBe('PLAIN');
    expect(chooseAuthMechanism(['CRAM-MD5', 'LOGIN'])).toBe('LOGIN');
    expect(chooseAuthMechanism(['CRAM-MD5', 'XOAUTH2'])).toBeNull();
    expect(chooseAuthMechanism([])).toBeNull();
  });
});

describe('AUTH encodings', () => {
  test('PLAIN is base64 of NUL user NUL password, UTF-8 included', () => {
    expect(authPlainResponse('ann', 'pässword')).toBe(Buffer.from('\0ann\0pässword', 'utf8').toString('base64'));
    expect(base64Utf8('ünïcode')).toBe(Buffer.from('ünïcode', 'utf8').toString('base64'));
  });
});
