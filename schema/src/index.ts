export * from './tenancy.js';
export * from './credentials.js';
export * from './audit.js';
export * from './relay.js';
export * from './mail.js';
export * from './events.js';
export * from './certificates.js';
export * from './webhooks.js';
