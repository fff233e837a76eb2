// The settings schema as an operator meets it: defaults from the spec, env
// names derived from the dotted names, text parsing, and refusals that name
// the setting.
import { describe, expect, it } from 'vitest';
import { envName } from './define.js';
import { ConfigError, loadConfig, type Config } from './load.js';
import { settings } from './settings.js';

/** Loads `env` and returns the ConfigError it throws (fails the test if none). */
function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error(`expected ${JSON.stringify(env)} to be refused`);
}

/** One setting of a loaded config, by its dotted name. */
const read = (config: Config, name: string): unknown => (config as unknown as Record<string, unknown>)[name];

/** The value one setting takes when only `env` is set. */
const valueOf = (name: string, env: Record<string, string>) => read(loadConfig(env).config, name);

describe('defaults match the spec', () => {
  const { config, removedInUse } = loadConfig({});

  it.each([
    ['ratelimit.enabled', true],
    ['ratelimit.login_per_minute', 10],
    ['ratelimit.oidc_per_minute', 30],
    ['ratelimit.api_per_minute', 120],
    ['ratelimit.ses_webhook_per_minute', 600],
    ['ratelimit.relay_node_chatter_per_minute', 600],
    ['ratelimit.relay_node_inbound_per_minute', 1200],
    ['submission.rate_per_minute', 60],
    ['inbound.rate_per_minute', 120],
    ['relay_node.inbound.rate_per_minute', 120],
    ['submission.proxy_protocol.enabled', false],
    ['inbound.proxy_protocol.enabled', false],
    ['webhook.max_attempts', 3],
    ['webhook.retry_delay', 10_000],
    ['webhook.timeout', 10_000],
    ['webhook.allow_private_targets', false],
    ['acme.enabled', false],
    ['audit_log_retention_days', 90],
  ] as const)('%s = %s', (name, expected) => {
    expect(read(config, name)).toEqual(expected);
  });

  it('an empty environment is valid and reports no removed keys', () => {
    expect(removedInUse).toEqual([]);
    expect(read(config, 'server.trusted_proxies')).toEqual([]);
    expect(read(config, 'submission.proxy_protocol.trusted')).toEqual([]);
  });
});

describe('env names', () => {
  it.each([
    ['ratelimit.api_per_minute', 'SERVICE_RATELIMIT_API_PER_MINUTE'],
    ['ratelimit.enabled', 'SERVICE_RATELIMIT_ENABLED'],
    ['ratelimit.relay_node_inbound_per_minute', 'SERVICE_RATELIMIT_RELAY_NODE_INBOUND_PER_MINUTE'],
    ['submission.proxy_protocol.enabled', 'SERVICE_SUBMISSION_PROXY_PROTOCOL_ENABLED'],
    ['submission.proxy_protocol.trusted', 'SERVICE_SUBMISSION_PROXY_PROTOCOL_TRUSTED'],
    ['relay_node.inbound.rate_per_minute', 'SERVICE_RELAY_NODE_INBOUND_RATE_PER_MINUTE'],
    ['audit_log_retention_days', 'SERVICE_AUDIT_LOG_RETENTION_DAYS'],
    ['database.crypto.encryption_key', 'SERVICE_DATABASE_CRYPTO_ENCRYPTION_KEY'],
  ])('%s is read from %s', (name, env) => {
    expect(envName(name)).toBe(env);
  });

  it('every setting is SERVICE_ + upper case with dots as underscores, and no two share a name', () => {
    const names = Object.keys(settings);
    for (const name of names) expect(envName(name)).toBe(`SERVICE_${name.toUpperCase().split('.').join('_')}`);
    expect(new Set(names.map(envName)).size).toBe(names.length);
  });

  it('each setting is set through its env name', () => {
    expect(valueOf('ratelimit.api_per_minute', { SERVICE_RATELIMIT_API_PER_MINUTE: '30' })).toBe(30);
    expect(valueOf('relay_node.inbound.rate_per_minute', { SERVICE_RELAY_NODE_INBOUND_RATE_PER_MINUTE: '7' })).toBe(7);
    expect(valueOf('audit_log_retention_days', { SERVICE_AUDIT_LOG_RETENTION_DAYS: '0' })).toBe(0);
  });

  it('variables without the SERVICE_ prefix are ignored', () => {
    expect(() => loadConfig({ PATH: '/usr/bin', HOME: '/root', RATELIMIT_ENABLED: 'nonsense' })).not.toThrow();
  });
});

describe('parsing text values', () => {
  it.each([
    ['true', true], ['false', false], ['TRUE', true], ['1', true], ['0', false], ['yes', true], ['no', false], ['on', true], ['off', false],
  ])('boolean %j → %s', (text, expected) => {
    expect(valueOf('ratelimit.enabled', { SERVICE_RATELIMIT_ENABLED: text })).toBe(expected);
  });

  it('integers, including 0 to disable a limiter', () => {
    expect(valueOf('ratelimit.login_per_minute', { SERVICE_RATELIMIT_LOGIN_PER_MINUTE: '25' })).toBe(25);
    expect(valueOf('ratelimit.login_per_minute', { SERVICE_RATELIMIT_LOGIN_PER_MINUTE: ' 25 ' })).toBe(25);
    expect(valueOf('submission.rate_per_minute', { SERVICE_SUBMISSION_RATE_PER_MINUTE: '0' })).toBe(0);
  });

  it.each([
    ['500ms', 500], ['10s', 10_000], ['2m', 120_000], ['1h', 3_600_000], ['0s', 0],
  ])('duration %j → %i ms', (text, ms) => {
    expect(valueOf('webhook.retry_delay', { SERVICE_WEBHOOK_RETRY_DELAY: text })).toBe(ms);
  });

  it('comma-separated lists, trimmed, empty entries dropped', () => {
    expect(valueOf('server.trusted_proxies', { SERVICE_SERVER_TRUSTED_PROXIES: '10.0.0.0/8, 192.168.1.1 ,,2001:db8::/32' }))
      .toEqual(['10.0.0.0/8', '192.168.1.1', '2001:db8::/32']);
    expect(valueOf('acme.hosts', { SERVICE_ACME_HOSTS: 'mx.example.com,smtp.example.com' })).toEqual(['mx.example.com', 'smtp.example.com']);
    expect(valueOf('acme.hosts', { SERVICE_ACME_HOSTS: '' })).toEqual([]);
  });

  it('acme.* refuses what an ACME order cannot use, naming the setting and the value', () => {
    expect(configError({ SERVICE_ACME_HOSTS: 'mx.example.com,*.example.com' }).message).toBe('invalid setting acme.hosts (SERVICE_ACME_HOSTS): "*.example.com" label "*" may hold only letters, digits and hyphens (item 1)');
    expect(configError({ SERVICE_ACME_HOSTS: 'MX.example.com' }).message).toMatch(/acme\.hosts .*"MX\.example\.com" must be written as "mx\.example\.com"/);
    expect(configError({ SERVICE_ACME_DIRECTORY_URL: 'http://ca.example/dir' }).message).toMatch(/acme\.directory_url .*expected an https URL/);
    expect(configError({ SERVICE_ACME_EMAIL: 'postmaster' }).message).toMatch(/acme\.email .*expected an email address/);
    expect(configError({ SERVICE_ACME_HTTP_PORT: '70000' }).message).toMatch(/acme\.http_port/);
    expect(valueOf('acme.directory_url', {})).toBe('https://acme-v02.api.letsencrypt.org/directory');
    expect(valueOf('acme.http_port', {})).toBe(80);
  });

  it('strings are kept as given', () => {
    expect(valueOf('server.public_url', { SERVICE_SERVER_PUBLIC_URL: 'https://mail.example.com' })).toBe('https://mail.example.com');
  });
});

describe('bad values are refused with a ConfigError naming the setting', () => {
  it.each([
    ['SERVICE_RATELIMIT_API_PER_MINUTE', 'lots', 'ratelimit.api_per_minute'],
    ['SERVICE_RATELIMIT_API_PER_MINUTE', '1.5', 'ratelimit.api_per_minute'],
    ['SERVICE_RATELIMIT_API_PER_MINUTE', '-1', 'ratelimit.api_per_minute'],
    ['SERVICE_RATELIMIT_API_PER_MINUTE', '', 'ratelimit.api_per_minute'],
    ['SERVICE_RATELIMIT_ENABLED', 'maybe', 'ratelimit.enabled'],
    ['SERVICE_WEBHOOK_RETRY_DELAY', '10 seconds', 'webhook.retry_delay'],
    ['SERVICE_WEBHOOK_RETRY_DELAY', 'soon', 'webhook.retry_delay'],
    ['SERVICE_WEBHOOK_MAX_ATTEMPTS', '0', 'webhook.max_attempts'],
    ['SERVICE_SERVER_TRUSTED_PROXIES', '10.0.0.0/8,not-an-ip', 'server.trusted_proxies'],
    ['SERVICE_SERVER_PUBLIC_URL', 'ftp://mail.example.com', 'server.public_url'],
  ])('%s=%j', (env, text, name) => {
    const e = configError({ [env]: text });
    expect(e.setting).toBe(name);
    expect(e.env).toBe(env);
    expect(e.message).toContain(name);
    expect(e.message).toContain(env);
  });

  it('the message says what was wrong with the value', () => {
    expect(configError({ SERVICE_RATELIMIT_API_PER_MINUTE: 'lots' }).message).toContain('lots');
  });

  it('an unknown SERVICE_* variable is refused by name', () => {
    const e = configError({ SERVICE_NO_SUCH_SETTING: '1' });
    expect(e.message).toContain('SERVICE_NO_SUCH_SETTING');
    expect(e.message).toMatch(/unknown/);
  });

  it('a misspelt setting is refused rather than silently ignored', () => {
    expect(configError({ SERVICE_RATELIMIT_API_PER_MINUTES: '30' }).message).toContain('SERVICE_RATELIMIT_API_PER_MINUTES');
  });
});

describe('removed keys', () => {
  it('SERVICE_TLS_MODE still parses and is reported', () => {
    const { config, removedInUse } = loadConfig({ SERVICE_TLS_MODE: 'acme' });
    expect(removedInUse).toEqual(['tls.mode']);
    expect(config['ratelimit.api_per_minute']).toBe(120);
  });

  it('every removed tls.* key is accepted and reported', () => {
    const env = Object.fromEntries(['tls.mode', 'tls.cert', 'tls.key', 'tls.fqdn', 'tls.alg', 'tls.cachedir'].map((k) => [envName(k), 'x']));
    expect(loadConfig(env).removedInUse.sort()).toEqual(['tls.alg', 'tls.cachedir', 'tls.cert', 'tls.fqdn', 'tls.key', 'tls.mode']);
  });

  it('a per-listener tls.acme.* block is accepted and reported', () => {
    const { removedInUse } = loadConfig({ SERVICE_SUBMISSION_TLS_ACME_EMAIL: 'ops@example.com' });
    expect(removedInUse).toHaveLength(1);
    expect(removedInUse[0]).toMatch(/acme/i);
  });
});

describe('PROXY protocol', () => {
  it.each([
    ['submission', 'SERVICE_SUBMISSION_PROXY_PROTOCOL_ENABLED'],
    ['inbound', 'SERVICE_INBOUND_PROXY_PROTOCOL_ENABLED'],
    ['relay_node.inbound', 'SERVICE_RELAY_NODE_INBOUND_PROXY_PROTOCOL_ENABLED'],
  ])('%s: enabled with an empty trusted list is refused', (listener, env) => {
    const e = configError({ [env]: 'true' });
    expect(e.setting).toBe(`${listener}.proxy_protocol.trusted`);
    expect(e.message).toContain(`${listener}.proxy_protocol.trusted`);
  });

  it('enabled with trusted peers is accepted', () => {
    const { config } = loadConfig({
      SERVICE_SUBMISSION_PROXY_PROTOCOL_ENABLED: 'true',
      SERVICE_SUBMISSION_PROXY_PROTOCOL_TRUSTED: '10.0.0.5, 192.168.0.0/16',
    });
    expect(read(config, 'submission.proxy_protocol.enabled')).toBe(true);
    expect(read(config, 'submission.proxy_protocol.trusted')).toEqual(['10.0.0.5', '192.168.0.0/16']);
  });

  it('a trusted entry that is not an address is refused', () => {
    const e = configError({ SERVICE_INBOUND_PROXY_PROTOCOL_ENABLED: 'true', SERVICE_INBOUND_PROXY_PROTOCOL_TRUSTED: 'balancer.local' });
    expect(e.setting).toBe('inbound.proxy_protocol.trusted');
  });

  it('disabled with an empty trusted list is fine', () => {
    expect(() => loadConfig({ SERVICE_SUBMISSION_PROXY_PROTOCOL_ENABLED: 'false' })).not.toThrow();
  });
});

describe('relay_node.inbound.* follows inbound.*', () => {
  it('takes the inbound value when only that one is set', () => {
    const { config } = loadConfig({ SERVICE_INBOUND_RATE_PER_MINUTE: '7', SERVICE_INBOUND_MAX_MESSAGE_SIZE: '4096' });
    expect(read(config, 'relay_node.inbound.rate_per_minute')).toBe(7);
    expect(read(config, 'relay_node.inbound.max_message_size')).toBe(4096);
    expect(read(config, 'relay_node.inbound.tls.enabled')).toBe(true);
  });

  it('keeps its own value when it is set', () => {
    const { config } = loadConfig({ SERVICE_INBOUND_RATE_PER_MINUTE: '7', SERVICE_RELAY_NODE_INBOUND_RATE_PER_MINUTE: '9' });
    expect(read(config, 'inbound.rate_per_minute')).toBe(7);
    expect(read(config, 'relay_node.inbound.rate_per_minute')).toBe(9);
  });

  it('an inherited PROXY switch without trusted peers is refused under the relay node name too', () => {
    expect(() => loadConfig({ SERVICE_INBOUND_PROXY_PROTOCOL_ENABLED: 'true', SERVICE_INBOUND_PROXY_PROTOCOL_TRUSTED: '10.0.0.1' })).not.toThrow();
    const { config } = loadConfig({ SERVICE_INBOUND_PROXY_PROTOCOL_ENABLED: 'true', SERVICE_INBOUND_PROXY_PROTOCOL_TRUSTED: '10.0.0.1' });
    expect(read(config, 'relay_node.inbound.proxy_protocol.trusted')).toEqual(['10.0.0.1']);
  });
});
