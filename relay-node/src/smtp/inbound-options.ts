// The inbound listener's options from the settings: `inbound.*` on the
// service's own MX, `relay_node.inbound.*` on a relay node's.
import type { Config } from '@edgemail/shared';
import type { InboundServerOptions } from './inbound-server.js';

export type InboundListenerName = 'inbound' | 'relay_node.inbound';

/**
 * The settings-backed part of `InboundServerOptions`; the caller adds the
 * host name and the TLS material.
 *
 * @example createInboundServer(deps, { ...inboundOptionsFromConfig(config, 'relay_node.inbound'), name, tls })
 */
export function inboundOptionsFromConfig(
  config: Config,
  listener: InboundListenerName,
): Pick<InboundServerOptions, 'maxMessageSize' | 'maxHeaderSize' | 'ratePerMinute' | 'greetingDelayMs'> {
  return {
    maxMessageSize: config[`${listener}.max_message_size`],
    maxHeaderSize: config[`${listener}.max_header_size`],
    ratePerMinute: config[`${listener}.rate_per_minute`],
    greetingDelayMs: config[`${listener}.greeting_delay`],
  };
}
