import { loadConfig } from '@edgemail/shared';
import { describe, expect, it } from 'vitest';
import { inboundOptionsFromConfig } from './inbound-options.js';

describe('inboundOptionsFromConfig', () => {
  it("reads each listener's own settings", () => {
    const { config } = loadConfig({ SERVICE_RELAY_NODE_INBOUND_RATE_PER_MINUTE: '7', SERVICE_RELAY_NODE_INBOUND_GREETING_DELAY: '100ms' });
    expect(inboundOptionsFromConfig(config, 'inbound')).toEqual({ maxMessageSize: 26_214_400, maxHeaderSize: 262_144, ratePerMinute: 120, greetingDelayMs: 0 });
    expect(inboundOptionsFromConfig(config, 'relay_node.inbound')).toMatchObject({ ratePerMinute: 7, greetingDelayMs: 100 });
  });
});
