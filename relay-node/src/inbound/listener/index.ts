export { createInboundServer, type InboundServerOptions } from './inbound-server.js';
export { inboundOptionsFromConfig, type InboundListenerName } from './inbound-options.js';
export type { InboundDeps, InboundEnvelope, StoreMessage } from './types.js';
