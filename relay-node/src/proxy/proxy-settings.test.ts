import { ConfigError } from '@edgemail/shared';
import { expect, test } from 'vitest';
import { validateProxySettings } from './proxy-settings.js';

test('enabled with an empty trusted list refuses to start, naming the setting and its env', () => {
  expect(() => validateProxySettings(true, [], 'inbound')).toThrow(ConfigError);
  expect(() => validateProxySettings(true, [], 'inbound')).toThrow(
    /inbound\.proxy_protocol\.trusted \(SERVICE_INBOUND_PROXY_PROTOCOL_TRUSTED\): may not be empty/,
  );
  expect(() => validateProxySettings(true, [])).toThrow(/proxy_protocol\.trusted/);
});

test('an entry that is not an IP or CIDR is named', () => {
  expect(() => validateProxySettings(true, ['10.0.0.0/8', 'balancer.local'], 'submission')).toThrow(
    /submission\.proxy_protocol\.trusted .*"balancer\.local"/,
  );
});

test('disabled, or enabled with addresses, passes', () => {
  expect(() => validateProxySettings(false, [])).not.toThrow();
  expect(() => validateProxySettings(true, ['10.0.0.0/8', '::1', '192.0.2.1'], 'submission')).not.toThrow();
});
