export { createInboundServer, sessionBounds, type InboundServerOptions, type InboundTls } from './inbound-server.js';
export { InboundConnection, InboundSmtpServer } from './inbound-connection.js';
export { inboundOptionsFromConfig, type InboundListenerName } from './inbound-options.js';
export { createSessionRate, type SessionRate } from './session-rate.js';
export { createSessionSlots, type SessionSlots } from './session-slots.js';
export { isSmtpReplyError, smtpReply, type SmtpReplyError } from './smtp-reply.js';
export type { InboundDeps, InboundEnvelope, StoreMessage } from './types.js';
