// The inbound listener's settings and `dns.servers`, as an operator sets them.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './load.js';

const load = (env: Record<string, string>) => loadConfig(env).config;

function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).message;
  }
  throw new Error(`expected ${JSON.stringify(env)} to be refused`);
}

describe('inbound listener settings', () => {
  it('default to 25 MiB messages, 256 KiB headers, normalised bare newlines, no greeting delay', () => {
    const config = load({});
    for (const listener of ['inbound', 'relay_node.inbound'] as const) {
      expect(config[`${listener}.max_message_size`]).toBe(26_214_400);
      expect(config[`${listener}.max_header_size`]).toBe(262_144);
      expect(config[`${listener}.bare_newlines`]).toBe('normalize');
      expect(config[`${listener}.greeting_delay`]).toBe(0);
    }
    expect(config['submission.greeting_delay']).toBe(0);
  });

  it('read from their env names, per listener', () => {
    const config = load({
      SERVICE_INBOUND_MAX_MESSAGE_SIZE: '1048576',
      SERVICE_RELAY_NODE_INBOUND_BARE_NEWLINES: 'reject',
      SERVICE_INBOUND_GREETING_DELAY: '100ms',
    });
    expect(config['inbound.max_message_size']).toBe(1_048_576);
    // Unset on the relay node, it follows its inbound twin (load.ts)…
    expect(config['relay_node.inbound.max_message_size']).toBe(1_048_576);
    // …while a relay node setting never flows the other way.
    expect(config['relay_node.inbound.bare_newlines']).toBe('reject');
    expect(config['inbound.bare_newlines']).toBe('normalize');
    expect(config['inbound.greeting_delay']).toBe(100);
  });

  it('refuse values that make no sense, naming the setting', () => {
    expect(refusal({ SERVICE_INBOUND_BARE_NEWLINES: 'strip' })).toMatch(/inbound\.bare_newlines/);
    expect(refusal({ SERVICE_INBOUND_MAX_MESSAGE_SIZE: '0' })).toMatch(/inbound\.max_message_size/);
    expect(refusal({ SERVICE_INBOUND_GREETING_DELAY: '100' })).toMatch(/inbound\.greeting_delay/);
  });
});

describe('dns.servers', () => {
  it('is empty (the system resolver) by default', () => {
    expect(load({})['dns.servers']).toEqual([]);
  });

  it('takes addresses with or without ports, IPv6 in brackets with a port', () => {
    expect(load({ SERVICE_DNS_SERVERS: '1.1.1.1, 127.0.0.1:5353,2001:db8::53,[2001:db8::53]:5353' })['dns.servers'])
      .toEqual(['1.1.1.1', '127.0.0.1:5353', '2001:db8::53', '[2001:db8::53]:5353']);
  });

  it.each(['dns.example.com', '127.0.0.1:0', '127.0.0.1:70000', '[127.0.0.1]:53', '1.2.3'])('refuses %s', (entry) => {
    expect(refusal({ SERVICE_DNS_SERVERS: entry })).toMatch(/dns\.servers.*expected an IP address/);
  });
});
