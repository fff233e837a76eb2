// Which EHLO name a setting gives, and which it refuses (the node-level
// proof, with a real receiver, is outbound-manners.test.ts).
import { ConfigError, loadConfig } from '@edgemail/shared';
import { expect, test } from 'vitest';
import { heloNameFromConfig } from './helo-name.js';

const helo = (env: Record<string, string>) => heloNameFromConfig(loadConfig(env).config);

test.each([
  [{ SERVICE_SERVER_PUBLIC_URL: 'https://mail.example.com' }, 'mail.example.com'],
  [{ SERVICE_SERVER_PUBLIC_URL: 'https://mail.example.com', SERVICE_OUTBOUND_HELO_NAME: 'Relay1.Example.COM.' }, 'relay1.example.com'],
  [{}, '[127.0.0.1]'],
  [{ SERVICE_SERVER_PUBLIC_URL: 'http://[2001:db8::1]:8787' }, '[IPv6:2001:db8::1]'],
  [{ SERVICE_OUTBOUND_HELO_NAME: '192.0.2.7' }, '[192.0.2.7]'],
  [{ SERVICE_OUTBOUND_HELO_NAME: '[192.0.2.7]' }, '[192.0.2.7]'],
  [{ SERVICE_OUTBOUND_HELO_NAME: '[IPv6:2001:DB8::7]' }, '[IPv6:2001:db8::7]'],
])('%o: EHLO %s', (env, name) => {
  expect(helo(env)).toBe(name);
});

test.each([
  [{ SERVICE_OUTBOUND_HELO_NAME: 'vm' }, '"vm" is not a fully qualified domain name (must have at least two labels (example.com))'],
  [{ SERVICE_OUTBOUND_HELO_NAME: 'mail example.com' }, '"mail example.com" is not a fully qualified domain name (must not contain spaces or control characters)'],
  [{ SERVICE_OUTBOUND_HELO_NAME: '[not-an-address]' }, '"[not-an-address]" is not a fully qualified domain name (must have at least two labels (example.com))'],
  [{ SERVICE_SERVER_PUBLIC_URL: 'http://vm:8787' }, 'not set, and the host of server.public_url ("vm") is not a fully qualified domain name'],
])('%o: refused, naming outbound.helo_name', (env, problem) => {
  expect(() => helo(env)).toThrow(ConfigError);
  expect(() => helo(env)).toThrow(`invalid setting outbound.helo_name (SERVICE_OUTBOUND_HELO_NAME): ${problem}`);
});
