import { loadConfig } from '@edgemail/shared';
import { describe, expect, it } from 'vitest';
import { inboundOptionsFromConfig } from './inbound-options.js';

describe('inboundOptionsFromConfig', () => {
  it("reads each listener's own settings", () => {
    const { config } = loadConfig({
      SERVICE_RELAY_NODE_INBOUND_RATE_PER_MINUTE: '7',
      SERVICE_RELAY_NODE_INBOUND_GREETING_DELAY: '100ms',
      SERVICE_RELAY_NODE_INBOUND_MAX_SESSIONS_PER_IP: '3',
      SERVICE_RELAY_NODE_INBOUND_IDLE_TIMEOUT: '30s',
    });
    expect(inboundOptionsFromConfig(config, 'inbound')).toEqual({
      maxMessageSize: 26_214_400, maxHeaderSize: 262_144, ratePerMinute: 120, greetingDelayMs: 0,
      maxSessions: 500, maxSessionsPerIp: 20, maxSessionDurationMs: 600_000, idleTimeoutMs: 300_000, maxMessagesPerSession: 100, maxNoopRsetPerSession: 50, maxCommandsPerSession: 100,
    });
    expect(inboundOptionsFromConfig(config, 'relay_node.inbound')).toMatchObject({ ratePerMinute: 7, greetingDelayMs: 100, maxSessionsPerIp: 3, idleTimeoutMs: 30_000 });
  });

  it('a relay node follows the `inbound.*` twin of a bound it leaves unset', () => {
    const { config } = loadConfig({ SERVICE_INBOUND_MAX_SESSIONS: '40', SERVICE_INBOUND_MAX_NOOP_RSET_PER_SESSION: '0', SERVICE_INBOUND_MAX_COMMANDS_PER_SESSION: '7' });
    expect(inboundOptionsFromConfig(config, 'relay_node.inbound')).toMatchObject({ maxSessions: 40, maxNoopRsetPerSession: 0, maxCommandsPerSession: 7 });
  });
});
