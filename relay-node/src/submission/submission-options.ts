// The submission listener's options from the settings: its own `submission.*`
// listener settings, and the message caps of `inbound.*` (the spec's
// "a submitted message over inbound.max_message_size").
import type { Config } from '@edgemail/shared';
import type { SubmissionServerOptions } from './submission-server.js';

type SettingsBacked =
  | 'maxMessageSize' | 'maxHeaderSize' | 'ratePerMinute' | 'greetingDelayMs'
  | 'maxSessions' | 'maxSessionsPerIp' | 'maxSessionDurationMs' | 'idleTimeoutMs' | 'maxMessagesPerSession' | 'maxNoopRsetPerSession';

/** @example createSubmissionServer(deps, { ...submissionOptionsFromConfig(config), name, tls }) */
export function submissionOptionsFromConfig(config: Config): Pick<SubmissionServerOptions, SettingsBacked> {
  return {
    maxMessageSize: config['inbound.max_message_size'],
    maxHeaderSize: config['inbound.max_header_size'],
    ratePerMinute: config['submission.rate_per_minute'],
    greetingDelayMs: config['submission.greeting_delay'],
    maxSessions: config['submission.max_sessions'],
    maxSessionsPerIp: config['submission.max_sessions_per_ip'],
    maxSessionDurationMs: config['submission.max_session_duration'],
    idleTimeoutMs: config['submission.idle_timeout'],
    maxMessagesPerSession: config['submission.max_messages_per_session'],
    maxNoopRsetPerSession: config['submission.max_noop_rset_per_session'],
  };
}
