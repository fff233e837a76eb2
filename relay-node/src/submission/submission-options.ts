// The submission listener's options from the settings: its own `submission.*`
// listener settings, and the message caps of `inbound.*` (the spec's
// "a submitted message over inbound.max_message_size"), lowered to what the
// edge's hand-over route takes: a larger message would be read in full only to
// be refused after the dot.
import { sendBodyLimitBytes, type Config } from '@edgemail/shared';
import type { SubmissionServerOptions } from './submission-server.js';

type SettingsBacked =
  | 'maxMessageSize' | 'maxHeaderSize' | 'ratePerMinute' | 'greetingDelayMs'
  | 'maxSessions' | 'maxSessionsPerIp' | 'maxSessionDurationMs' | 'idleTimeoutMs' | 'maxMessagesPerSession' | 'maxNoopRsetPerSession' | 'maxCommandsPerSession';

/** @example createSubmissionServer(deps, { ...submissionOptionsFromConfig(config), name, tls }) */
export function submissionOptionsFromConfig(config: Config): Pick<SubmissionServerOptions, SettingsBacked> {
  return {
    maxMessageSize: submissionMaxMessageSize(config),
    maxHeaderSize: config['inbound.max_header_size'],
    ratePerMinute: config['submission.rate_per_minute'],
    greetingDelayMs: config['submission.greeting_delay'],
    maxSessions: config['submission.max_sessions'],
    maxSessionsPerIp: config['submission.max_sessions_per_ip'],
    maxSessionDurationMs: config['submission.max_session_duration'],
    idleTimeoutMs: config['submission.idle_timeout'],
    maxMessagesPerSession: config['submission.max_messages_per_session'],
    maxNoopRsetPerSession: config['submission.max_noop_rset_per_session'],
    maxCommandsPerSession: config['submission.max_commands_per_session'],
  };
}

/**
 * The one message size the submission listener advertises (EHLO `SIZE`) and
 * enforces (`MAIL FROM … SIZE=`, and the data): the smaller of
 * `inbound.max_message_size` and the edge's send body limit
 * (`sendBodyLimitBytes`: 4/3 × `send.max_attachment_bytes` +
 * `server.max_body_bytes`, about 14.3 MiB by default), from the node's own
 * settings, which are the edge's when both read one environment.
 */
export function submissionMaxMessageSize(config: Config): number {
  return Math.min(config['inbound.max_message_size'], sendBodyLimitBytes(config));
}
