// The inbound listener's options from the settings: `inbound.*` on the
// service's own MX, `relay_node.inbound.*` on a relay node's.
import type { Config } from '@edgemail/shared';
import type { InboundServerOptions } from './inbound-server.js';

export type InboundListenerName = 'inbound' | 'relay_node.inbound';

type SettingsBacked =
  | 'maxMessageSize' | 'maxHeaderSize' | 'ratePerMinute' | 'greetingDelayMs'
  | 'maxSessions' | 'maxSessionsPerIp' | 'maxSessionDurationMs' | 'idleTimeoutMs' | 'maxMessagesPerSession' | 'maxNoopRsetPerSession' | 'maxCommandsPerSession';

/**
 * The settings-backed part of `InboundServerOptions`; the caller adds the
 * host name and the TLS material.
 *
 * @example createInboundServer(deps, { ...inboundOptionsFromConfig(config, 'relay_node.inbound'), name, tls })
 */
export function inboundOptionsFromConfig(config: Config, listener: InboundListenerName): Pick<InboundServerOptions, SettingsBacked> {
  return {
    maxMessageSize: config[`${listener}.max_message_size`],
    maxHeaderSize: config[`${listener}.max_header_size`],
    ratePerMinute: config[`${listener}.rate_per_minute`],
    greetingDelayMs: config[`${listener}.greeting_delay`],
    maxSessions: config[`${listener}.max_sessions`],
    maxSessionsPerIp: config[`${listener}.max_sessions_per_ip`],
    maxSessionDurationMs: config[`${listener}.max_session_duration`],
    idleTimeoutMs: config[`${listener}.idle_timeout`],
    maxMessagesPerSession: config[`${listener}.max_messages_per_session`],
    maxNoopRsetPerSession: config[`${listener}.max_noop_rset_per_session`],
    maxCommandsPerSession: config[`${listener}.max_commands_per_session`],
  };
}
