import { describe, expect, test } from 'vitest';
import { simulatorAddressOf, simulatorDomain } from './simulator.js';

describe('simulatorDomain', () => {
  test.each([
    ['https://mail.example.com', 'simulator.mail.example.com'],
    ['https://Mail.Example.COM:8443/base', 'simulator.mail.example.com'],
    ['http://127.0.0.1:8787', 'simulator.localhost'],
    ['http://[::1]:8787', 'simulator.localhost'],
    ['http://localhost:8787', 'simulator.localhost'],
  ])('%s → %s', (url, domain) => {
    expect(simulatorDomain({ 'server.public_url': url })).toBe(domain);
  });
});

describe('simulatorAddressOf', () => {
  const domain = 'simulator.mail.example.com';
  test.each([
    ['bounce@simulator.mail.example.com', 'bounce'],
    ['Bounce+run-7@Simulator.Mail.Example.com', 'bounce'],
    ['complaint@simulator.mail.example.com', 'complaint'],
    ['defer+1@simulator.mail.example.com', 'defer'],
    ['delivered@simulator.mail.example.com', 'delivered'],
    ['bounced@simulator.mail.example.com', 'unknown'],
    ['bounce@mail.example.com', null],
    ['bounce@x.simulator.mail.example.com', null],
    ['bounce@simulator.mail.example.com.evil.test', null],
  ])('%s → %s', (recipient, kind) => {
    expect(simulatorAddressOf(recipient, domain)).toBe(kind);
  });
});
